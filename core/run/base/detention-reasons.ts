import { join } from 'node:path';
import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import { tailLines } from '../../fingerprint/log.js';
import type { StoppingVerdict } from '../../fingerprint/verdict.js';
import type { DetentionKind } from '../../kernel/hooks.js';
import type { LoopKind } from '../../ports/agent.js';
import { markedBlock, oneLine } from '../../text/model.js';
import { type GuardVerdict, showPaths } from './guard.js';

/**
 * Detention: why a run stopped, and the one `next:` line that tells the
 * person what to do about it. Pure: the run loop supplies the facts.
 */
export { DETENTION_KINDS, type DetentionKind } from '../../kernel/hooks.js';

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
  /** The rubric could not start in the sandbox: `the rubric cannot start: 'go' is not in the sandbox (...)`. */
  environment: (what: string) => `the rubric cannot start: ${what}`,
  /** CHALK_BASELINE=known: what a failed loop added to the base's failing tests. */
  beyondBase: (tests: readonly string[]) =>
    `adding ${tests.length} failing test${tests.length === 1 ? '' : 's'} to the base's: ${tests.slice(0, 5).join(', ')}${tests.length > 5 ? ` and ${tests.length - 5} more` : ''}`,
  /** The sandbox's commits were refused on their way home (over a cap, not a commit, ...): one line of why. */
  refused: (why: string) => `refused on the way home: ${why}`,
  /** A fleet's run stopped between loops: the next call could pass CHALK_FLEET_BUDGET_USD. */
  fleetBudget: (epic: string, spentUsd: number, ceilingUsd: number) =>
    `fleet budget: fleet ${epic} has spent $${spentUsd.toFixed(2)} of CHALK_FLEET_BUDGET_USD=$${ceilingUsd.toFixed(2)}, and another call could pass it`,
};

/** What to do about a rubric that cannot start: add the missing command to the sandbox image. */
export function environmentAdvice(command: string | null, log: string, afterAgent = true): string {
  if (!command) return `read ${log}, and check that CHALK_TEST_CMD can run in the sandbox image (chalk doctor)`;
  const add = `put '${command}' in the sandbox image (the toolchain that has it, or CHALK_IMAGE), then run: chalk doctor`;
  return afterAgent ? `${add}; if the agent removed it, see ${log}` : add;
}

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
  /** The line a plugin's StopRequest gave (`next`): it stands for the kind's own. */
  given?: string;
  /** Actions the permission checks refused in the last loop. */
  denials?: number;
  /** guard: the files the guard refused. */
  files?: readonly string[];
  /** The branch the attempt is parked on. */
  branch?: string;
  /** environment: the command the sandbox lacks, when the output named it. */
  command?: string | null;
  /**
   * How the rubric (`failed`) or the agent call (`agent_error`) ended when a
   * limit or the sandbox ended it, e.g. `timed out after 60 s (CHALK_RUBRIC_TIMEOUT)`.
   */
  ending?: string;
  /** Destinations the egress proxy refused during the last loop's rubric (`host:port`). */
  egressBlocked?: readonly string[];
}

/** Detentions on a failing rubric: a refused destination there is the likeliest cause to name. */
const RUBRIC_FAILURES: ReadonlySet<DetentionKind> = new Set(['failed', 'repeat', 'no_change', 'deja_vu', 'stuck']);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const dollars = (v: string | number) => (typeof v === 'number' ? v.toFixed(2) : v);

/** The text after `next: `: one line, the person's next step. */
export function nextStep(f: NextStepFacts): string {
  const denials = f.denials ?? 0;
  const blocked = f.egressBlocked ?? [];
  if (blocked.length > 0 && RUBRIC_FAILURES.has(f.kind)) {
    return `the rubric failed after the egress proxy refused ${blocked.join(', ')}; if the tests need ${blocked.length === 1 ? 'it' : 'them'}, allow ${blocked.length === 1 ? 'it' : 'them'} with CHALK_EGRESS_ALLOW=${blocked.join(',')} on this machine (or list ${blocked.length === 1 ? 'it' : 'them'} in CHALK_EGRESS_HOSTS in .chalk/config and run chalk egress trust), then run the ticket again; see ${join(f.io, 'egress.jsonl')}`;
  }
  // An agent that changed what grades it matters more than refused actions: that line stays.
  if (denials >= DENIALS_OVERRIDE && f.kind !== 'guard') {
    return `${plural(denials, 'action')} were refused by permission checks in the last loop, which happens when auto mode is not available for the model; run: chalk doctor`;
  }
  if (f.given && f.given.trim() !== '') return oneLine(f.given);
  switch (f.kind) {
    case 'blocked':
      return 'supply what the blocker above asks for (for example a credential, access or a decision)';
    case 'failed':
      if (f.ending) {
        return `the rubric ${f.ending}; read ${join(f.io, 'rubric.log')} for how far it got, then make it need less or raise the limit named there`;
      }
      return `the rubric still failed after ${f.maxRetries} ${f.maxRetries === 1 ? 'retry' : 'retries'}; read ${join(f.io, 'rubric.log')} and fix the failure, or split the checkpoint into smaller ones`;
    case 'agent_error':
      if (f.ending) {
        return `the agent ${f.ending}; read ${join(f.io, 'loop.err')} for how far it got, then split the checkpoint into smaller ones or raise the limit named there`;
      }
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
    case 'refused':
      return "the sandbox's commits were refused on their way home, so nothing of that loop reached the ticket branch or the worktree; if the work really needs more than the cap named above, raise that key in your environment (a repository cannot), then run the ticket again";
    case 'fleet_budget':
      return "this ticket's fleet reached its spend ceiling; raise CHALK_FLEET_BUDGET_USD if the work is worth it, then run the ticket again";
    case 'environment':
      return environmentAdvice(f.command ?? null, join(f.io, 'rubric.log'));
    case 'stuck':
      // A decider's StopRequest gives its own line (with its confidence); this is the kind's fallback.
      return 'the agent looks stuck on the same root cause as the loop before; fix that cause yourself, since a retry would likely fail the same way';
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

/** At most this many failing test ids are named in a detention's lines. */
const NAMED_TESTS = 5;

/**
 * What a person reads first about a failed rubric: the failing tests (by the runner's ids) and
 * the first error, each on one line (the rubric's output is the repository's: no control
 * characters, whitespace collapsed, cut at 240 characters).
 */
export function failureLines(fp: Pick<Fingerprint, 'tests' | 'firstError' | 'generic'>): string[] {
  const lines: string[] = [];
  const line = (t: string) => oneLine(t, 240);
  const tests = fp.tests ?? [];
  if (tests.length > 0) {
    const named = tests.slice(0, NAMED_TESTS).map(line).join(', ');
    const more = tests.length > NAMED_TESTS ? ` and ${tests.length - NAMED_TESTS} more` : '';
    lines.push(`${tests.length === 1 ? 'failing test' : `${tests.length} failing tests`}: ${named}${more}`);
  }
  if (fp.firstError.trim() !== '' && !fp.generic) lines.push(`first error: ${line(fp.firstError)}`);
  return lines;
}

/**
 * What a detention prints, in order (the loop prefixes each line with `[TICKET] `): the reason,
 * Chalk's one-line account of a failed rubric (indented), the detail (the model's words, marked
 * `  | `, so no line of it can pass for the `next:` line or the `cd` line), exactly one `next:`
 * line, and how to get to the parked work and resume.
 */
export function detentionLines(d: {
  reason: string;
  /** Chalk's own one-line account of a failed rubric (failureLines), indented under the reason. */
  failure?: readonly string[];
  /** The model's words (a blocker, review findings): a block marked as someone else's. */
  detail: string;
  next: string;
  branch: string;
  worktree: string;
  /** False when the attempt itself could not be kept: the branch then holds the last green work only. */
  parked?: boolean;
}): string[] {
  const lines = [`DETENTION: ${d.reason}`, ...(d.failure ?? []).map((l) => `  ${l}`)];
  if (d.detail.trim() !== '') lines.push(...markedBlock(d.detail));
  lines.push(
    `next: ${d.next}`,
    d.parked === false
      ? `the attempt was not kept; local branch ${d.branch} holds the last green work, nothing was pushed. To take over:`
      : `work parked on local branch ${d.branch}; nothing was pushed. To take over:`,
    `  cd ${shellQuote(d.worktree)} && git switch ${shellQuote(d.branch)}`,
    `  fix it, commit, then: chalk office-hours -m "what was wrong"`,
  );
  return lines;
}

/** How a loop ended, and the reason when it made no progress. */
export type LoopOutcome =
  | { ended: 'progressed'; reason: null }
  | { ended: 'blocked' | 'passed'; reason: string }
  /** `ending`: how a limit or the sandbox ended the agent call or the rubric (NextStepFacts.ending). */
  | { ended: 'agent_error' | 'failed'; reason: string; ending?: string }
  /** The guard refused the loop's changes (core/run/base/guard.ts): the files it named. */
  | { ended: 'failed'; reason: string; guarded: string[] }
  /** The sandbox's commits were refused on their way home: nothing of the loop reached the host. */
  | { ended: 'failed'; reason: string; refused: true };

/**
 * Classifies a finished loop. A `blocked` answer wins over everything (no
 * rubric is run for it); then the guard: a loop that changed what grades it
 * failed with the guard's reason, whatever it ticked and whatever the rubric
 * said (its work is never committed); an agent that did not finish (`ok`)
 * stopped early whatever the rubric said; then the rubric decides; a green
 * loop progressed when it ticked a checkpoint, or when it was a fix-review loop.
 */
/** What a finished loop's classification reads (policy's LoopFacts, with the agent's answer). */
export interface LoopOutcomeFacts {
  mode: LoopKind;
  /** `ok`, or the CLI's error status. */
  agentStatus: string;
  /** The rubric's exit code (124 when it timed out). */
  rubricExit: number;
  /** Open checkpoints when the loop started. */
  openBefore: number;
  /** Open checkpoints after a green loop was brought home (ignored otherwise). */
  openAfter: number;
  /**
   * The guard's verdict on what the loop changed against its base (guardLoop). Ask it before
   * anything is committed; a refused loop is not committed and ends `failed` with its reason.
   */
  guard?: GuardVerdict;
  /** CHALK_OUTPUT_CAP_MB, when the rubric printed past it and was stopped. */
  rubricCappedMb?: number;
  /** Why the sandbox's commits were refused on their way home (the bundle, its tree, the worktree). */
  refused?: string;
  /** How a limit or the sandbox ended the agent call (`timed out after 3600 s (CHALK_AGENT_TIMEOUT)`). */
  agentEnding?: string;
  /** How a limit or the sandbox ended the rubric (`timed out after 60 s (CHALK_RUBRIC_TIMEOUT)`). */
  rubricEnding?: string;
}

export function loopOutcome(l: LoopOutcomeFacts & { answer: 'done' | 'blocked' | null }): LoopOutcome {
  if (l.answer === 'blocked') return { ended: 'blocked', reason: reasons.blocked() };
  if (l.guard && !l.guard.ok) return { ended: 'failed', reason: l.guard.reason, guarded: l.guard.files };
  if (l.refused !== undefined) return { ended: 'failed', reason: reasons.refused(l.refused), refused: true };
  if (l.agentStatus !== 'ok') {
    return l.agentEnding
      ? { ended: 'agent_error', reason: `agent ${l.agentEnding}`, ending: l.agentEnding }
      : { ended: 'agent_error', reason: reasons.agentError(l.agentStatus) };
  }
  if (l.rubricCappedMb !== undefined) return { ended: 'failed', reason: reasons.rubricCapped(l.rubricCappedMb) };
  if (l.rubricEnding) return { ended: 'failed', reason: `rubric ${l.rubricEnding}`, ending: l.rubricEnding };
  if (l.rubricExit !== 0) return { ended: 'failed', reason: reasons.failed(l.rubricExit) };
  if (l.mode === 'fix-review' || l.openAfter < l.openBefore) return { ended: 'progressed', reason: null };
  return { ended: 'passed', reason: reasons.passed() };
}
