import { join } from 'node:path';
import { tailLines } from '../fingerprint/log.js';
import type { StoppingVerdict } from '../fingerprint/verdict.js';
import type { LoopKind } from '../ports/agent.js';
import { type GuardVerdict, showPaths } from './guard.js';

/**
 * Detention: why a run stopped, and the one `next:` line that tells the
 * person what to do about it. Pure: the run loop supplies the facts.
 */
export const DETENTION_KINDS = [
  'blocked',
  'failed',
  'agent_error',
  'passed',
  'loop_limit',
  'review',
  'deja_vu',
  'repeat',
  'no_change',
  'stuck',
  'guard',
  'fleet_budget',
  'other',
] as const;
export type DetentionKind = (typeof DETENTION_KINDS)[number];

/** The reason logged as `DETENTION: <reason>` and recorded with the open lesson. */
export const reasons = {
  blocked: () => 'agent reported a blocker',
  failed: (exitCode: number) => `rubric failed (exit ${exitCode})`,
  /** The rubric printed past CHALK_OUTPUT_CAP_MB and was stopped. */
  rubricCapped: (capMb: number) => `rubric printed more than CHALK_OUTPUT_CAP_MB (${capMb} MiB) and was stopped`,
  agentError: (status: string) => `agent stopped early (${status})`,
  passed: () => 'rubric passed but no checkpoint was ticked in the spec',
  loopLimit: (maxLoops: number, open: number) =>
    `loop limit of ${maxLoops} reached with ${open} checkpoint${open === 1 ? '' : 's'} open`,
  review: (rounds: number) => `final review still finds problems after ${rounds} fix round${rounds === 1 ? '' : 's'}`,
  /** A stopping verdict under `CHALK_FP_RULES=on`: `repeat: rubric failed (exit 1)`. */
  verdict: (verdict: StoppingVerdict, loopReason: string) => `${verdict}: ${loopReason}`,
  stuck: (loopReason: string) => `stuck: ${loopReason}`,
  /** A fleet's run stopped between loops: the next call could pass CHALK_FLEET_BUDGET_USD. */
  fleetBudget: (epic: string, spentUsd: number, ceilingUsd: number) =>
    `fleet budget: fleet ${epic} has spent $${spentUsd.toFixed(2)} of CHALK_FLEET_BUDGET_USD=$${ceilingUsd.toFixed(2)}, and another call could pass it`,
};

/** From this many refused actions in the last loop, the `next:` line points at permissions instead. */
export const DENIALS_OVERRIDE = 3;

export interface NextStepFacts {
  kind: DetentionKind;
  /** The run's `io/` directory, where rubric.log and loop.json are. */
  io: string;
  maxRetries: number;
  maxLoops: number;
  reviewRounds: number;
  /** `CHALK_BUDGET_USD` as configured. */
  budgetUsd: string | number;
  /** deja_vu: the other ticket whose open detention fails the same way. */
  openTicket?: string | null;
  /** stuck: the decider's confidence, 0..1. */
  confidence?: number;
  /** Actions the permission checks refused in the last loop. */
  denials?: number;
  /** guard: the files the guard refused. */
  files?: readonly string[];
  /** The branch the attempt is parked on. */
  branch?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const dollars = (v: string | number) => (typeof v === 'number' ? v.toFixed(2) : v);

/** The text after `next: `: one line, the person's next step. */
export function nextStep(f: NextStepFacts): string {
  const denials = f.denials ?? 0;
  // An agent that changed what grades it matters more than refused actions: that line stays.
  if (denials >= DENIALS_OVERRIDE && f.kind !== 'guard') {
    return `${plural(denials, 'action')} were refused by permission checks in the last loop, which happens when auto mode is not available for the model; run: chalk doctor`;
  }
  switch (f.kind) {
    case 'blocked':
      return 'supply what the blocker above asks for (for example a credential, access or a decision)';
    case 'failed':
      return `the rubric still failed after ${f.maxRetries} ${f.maxRetries === 1 ? 'retry' : 'retries'}; read ${join(f.io, 'rubric.log')} and fix the failure, or split the checkpoint into smaller ones`;
    case 'agent_error':
      return `read ${join(f.io, 'loop.json')} for why the agent stopped; if it hit the spend cap, raise CHALK_BUDGET_USD (now ${dollars(f.budgetUsd)})`;
    case 'passed':
      return 'the rubric passes but the agent ticked no checkpoint; tick it if the work is done, or reword it so a test can prove it';
    case 'loop_limit':
      return `split the open checkpoints into smaller ones, or raise CHALK_MAX_LOOPS (now ${f.maxLoops})`;
    case 'review':
      return `fix the review findings above yourself, or allow more fix rounds with CHALK_REVIEW_ROUNDS (now ${f.reviewRounds})`;
    case 'deja_vu':
      return `this fails the same way as the open detention of ${f.openTicket || 'another ticket'}; resolve that one first`;
    case 'repeat':
      return 'the agent made the same failing change twice; fix the failure yourself, since a retry would repeat it';
    case 'no_change':
      return 'the agent left the code unchanged; make the checkpoint clearer, or do this step yourself';
    case 'guard': {
      const files = f.files && f.files.length > 0 ? showPaths(f.files) : 'the files named above';
      const branch = f.branch ?? 'the detention branch below';
      return `the agent changed what it is graded by (${files}), so none of that work reached the ticket branch; read the attempt on ${branch} (git diff HEAD ${branch}) before you take any of it, and make such a change yourself if the ticket needs it`;
    }
    case 'fleet_budget':
      return "this ticket's fleet reached its spend ceiling; raise CHALK_FLEET_BUDGET_USD if the work is worth it, then run the ticket again";
    case 'stuck':
      return `the decider judged the agent stuck on the same root cause as the loop before (confidence ${(f.confidence ?? 0).toFixed(2)}); fix that cause yourself, since a retry would likely fail the same way`;
    default:
      return 'fix what stopped the run';
  }
}

/**
 * `PREFIX/TICKET-<epoch>`, or with `-2`, `-3`, ... appended when that name is
 * taken. `existing` may name branches short (`detention/X-1`) or in full
 * (`refs/heads/detention/X-1`).
 */
export function epochBranch(
  prefix: 'detention' | 'tutoring',
  o: { ticket: string; epochSeconds: number; existing: Iterable<string> },
): string {
  const taken = new Set([...o.existing].map((b) => b.replace(/^refs\/heads\//, '')));
  const base = `${prefix}/${o.ticket}-${Math.floor(o.epochSeconds)}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const name = `${base}-${n}`;
    if (!taken.has(name)) return name;
  }
}

/** The branch the failed attempt is parked on: `detention/TICKET-<epoch>` (see epochBranch). */
export const detentionBranch = (ticket: string, epochSeconds: number, existing: Iterable<string>): string =>
  epochBranch('detention', { ticket, epochSeconds, existing });

/** The commit message of the parked attempt. */
export const detentionCommitMessage = (ticket: string, reason: string) => `detention(${ticket}): ${reason}`;

/** Lines of rubric output kept in a detention's signature when there is no detail. */
export const SIGNATURE_TAIL = 40;

/**
 * The open lesson's signature: the reason, then the detail (a blocker, review
 * findings), or else the end of the rubric output when there is any.
 */
export function detentionSignature(reason: string, detail: string, rubricLog: string): string {
  if (detail.trim() !== '') return `${reason}\n${detail}`;
  const tail = tailLines(rubricLog, SIGNATURE_TAIL);
  return tail === '' ? reason : `${reason}\n${tail}`;
}

/** A word for a POSIX shell, in single quotes. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * What a detention prints, in order (the loop prefixes each line with
 * `[TICKET] `): the reason, the detail (indented, so no detail line can pass
 * for the `next:` line), exactly one `next:` line, and how to get to the
 * parked work and resume.
 */
export function detentionLines(d: {
  reason: string;
  detail: string;
  next: string;
  branch: string;
  worktree: string;
}): string[] {
  const lines = [`DETENTION: ${d.reason}`];
  if (d.detail.trim() !== '')
    lines.push(
      ...d.detail
        .replace(/\n+$/, '')
        .split('\n')
        .map((l) => `  ${l}`),
    );
  lines.push(
    `next: ${d.next}`,
    `work parked on local branch ${d.branch}; nothing was pushed. To take over:`,
    `  cd ${shellQuote(d.worktree)} && git switch ${shellQuote(d.branch)}`,
    `  fix it, commit, then: chalk office-hours -m "what was wrong"`,
  );
  return lines;
}

/** How a loop ended, and the reason when it made no progress. */
export type LoopOutcome =
  | { ended: 'progressed'; reason: null }
  | { ended: 'blocked' | 'agent_error' | 'failed' | 'passed'; reason: string }
  /** The guard refused the loop's changes (core/run/guard.ts): the files it named. */
  | { ended: 'failed'; reason: string; guarded: string[] };

/**
 * Classifies a finished loop. A `blocked` answer wins over everything (no
 * rubric is run for it); then the guard: a loop that changed what grades it
 * failed with the guard's reason, whatever it ticked and whatever the rubric
 * said (its work is never committed); an agent that did not finish (`ok`)
 * stopped early whatever the rubric said; then the rubric decides; a green
 * loop progressed when it ticked a checkpoint, or when it was a fix-review loop.
 */
export function loopOutcome(l: {
  mode: LoopKind;
  answer: 'done' | 'blocked' | null;
  agentStatus: string;
  rubricExit: number;
  openBefore: number;
  openAfter: number;
  /** The guard's verdict on the loop's changes; absent when it was not asked. */
  guard?: GuardVerdict;
  /** Set (to CHALK_OUTPUT_CAP_MB) when the rubric printed past the cap and was stopped. */
  rubricCappedMb?: number;
}): LoopOutcome {
  if (l.answer === 'blocked') return { ended: 'blocked', reason: reasons.blocked() };
  if (l.guard && !l.guard.ok) return { ended: 'failed', reason: l.guard.reason, guarded: l.guard.files };
  if (l.agentStatus !== 'ok') return { ended: 'agent_error', reason: reasons.agentError(l.agentStatus) };
  if (l.rubricCappedMb !== undefined) return { ended: 'failed', reason: reasons.rubricCapped(l.rubricCappedMb) };
  if (l.rubricExit !== 0) return { ended: 'failed', reason: reasons.failed(l.rubricExit) };
  if (l.mode === 'fix-review' || l.openAfter < l.openBefore) return { ended: 'progressed', reason: null };
  return { ended: 'passed', reason: reasons.passed() };
}
