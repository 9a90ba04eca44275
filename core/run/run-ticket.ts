import { readFileSync } from 'node:fs';
import { retryFeedback } from '../fingerprint/feedback.js';
import { isStopping } from '../fingerprint/verdict.js';
import type { SandboxSession } from '../ports/sandbox.js';
import { openCount } from '../spec/checkpoints.js';
import { type ClaimOptions, claim } from './claim.js';
import { type RunContext, resolveContext } from './context.js';
import type { RunDeps } from './deps.js';
import { DETENTION_EXIT, type DetainInput, detain } from './detention.js';
import { DETENTION_KINDS, type DetentionKind, reasons } from './detention-reasons.js';
import { fleetBudgetStop } from './fleet-budget.js';
import { graduate } from './graduation.js';
import { CallTracker, recordOnAbort, trackingAgent } from './interrupt.js';
import { type LoopResult, runLoop } from './loop-step.js';
import { afterFailedReview, afterLoop, chooseMode, countsOf, guardFeedback, reviewDue, startLoop } from './policy.js';
import { loopFailure } from './recall.js';
import { finalReview, type ReviewOutcome } from './review.js';
import { newRun, type Run } from './run.js';
import { type RunRecorder, recordRun, startOrResume } from './run-record.js';
import { openSandbox, runSetup, startServices } from './session.js';
import { specCheck } from './spec-check.js';

/** The exit code of a run whose spec check failed. */
export const SPEC_BLOCKED_EXIT = 4;

export type RunOutcome =
  | { kind: 'graduated'; outcome: 'opened' | 'pushed' | 'ready'; url: string | null }
  | { kind: 'detained'; branch: string; reason: string; detentionKind: DetentionKind }
  | { kind: 'spec-blocked' };

export interface RunResult {
  ctx: RunContext;
  outcome: RunOutcome;
  exitCode: number;
}

export interface RunTicketOptions {
  /** The worktree root (null outside a repository: a refusal). */
  root: string | null;
  /** Already resolved (e.g. by `--detach`'s parent checks); resolved here when absent. */
  ctx?: RunContext;
  /** Aborted by the edge (the CLI on SIGINT/SIGTERM): the call in flight is recorded `interrupted`. */
  signal?: AbortSignal;
  /** Given the interrupted call's record when `signal` aborts, so the edge can wait for it. */
  onInterrupt?: (recorded: Promise<void>) => void;
  /** Registers the claim's release at process exit (the CLI's edge; see claim.ts). */
  atExit?: ClaimOptions['atExit'];
}

export { limitsFrom } from './run.js';

const asKind = (k: string | undefined): DetentionKind =>
  (DETENTION_KINDS as readonly string[]).includes(k ?? '') ? (k as DetentionKind) : 'other';

/**
 * `chalk run`: context and refusals, claim, database and image, the sandbox,
 * the setup command, the spec check, then loops until every checkpoint is
 * ticked, the final review, and graduation, or detention. The sandbox is
 * removed and the claim released on every way out. Process signals are the
 * edge's: it aborts `signal`, and the call in flight is recorded `interrupted`.
 */
export async function runTicket(given: RunDeps, opts: RunTicketOptions): Promise<RunResult> {
  const ctx =
    opts.ctx ?? (await resolveContext({ root: opts.root, config: given.config, env: given.env, git: given.git }));
  const tracker = new CallTracker();
  const deps: RunDeps = { ...given, agent: trackingAgent(given.agent, tracker, () => given.clock.now().getTime()) };
  const log = deps.log.child(`[${ctx.ticket}] `);
  const release = claim(ctx.paths, ctx.ticket, opts.atExit ? { atExit: opts.atExit } : {});
  let session: SandboxSession | null = null;
  let unhook = () => {};
  try {
    // A run that ended without an ending (killed, interrupted) is continued: run-record.ts, resume.ts.
    const start = await startOrResume(ctx, deps, log);
    const { id } = start;
    const record = recordRun(ctx.paths, start, deps.clock);
    await startServices(deps, log);
    const opened = await openSandbox(ctx, deps, log, { runId: id });
    session = opened.session;
    unhook = recordOnAbort({ ctx, deps, tracker, runId: id, signal: opts.signal, onInterrupt: opts.onInterrupt });
    const { base } = opened;
    const run = newRun({ ctx, deps, session, log, id, signal: opts.signal, tracker, base, counts: start.counts });
    await runSetup(ctx, session, deps, log);
    if (deps.config.bool('CHALK_SPEC_CHECK')) {
      const check = await specCheck(ctx, deps, session, log, { runId: id, signal: opts.signal });
      if (check === 'fail') {
        record.end('spec-blocked', start.counts);
        return { ctx, outcome: { kind: 'spec-blocked' }, exitCode: SPEC_BLOCKED_EXIT };
      }
    }
    const outcome = await loops(run, record);
    record.end(outcome.kind, countsOf(run.state));
    const exitCode = outcome.kind === 'detained' ? DETENTION_EXIT : 0;
    return { ctx, outcome, exitCode };
  } finally {
    unhook();
    if (session) await session.stop().catch(() => undefined);
    release();
  }
}

async function park(run: Run, d: DetainInput): Promise<RunOutcome> {
  const { branch } = await detain(run, d);
  return { kind: 'detained', branch, reason: d.reason, detentionKind: d.kind };
}

/** The loops, the final review when every checkpoint is ticked, then graduation or detention. */
async function loops(run: Run, record: RunRecorder): Promise<RunOutcome> {
  const { state, limits } = run;
  // What the run has done so far, for a resume if it is killed (run-record.ts).
  const progress = () => record.progress(countsOf(state));
  for (;;) {
    progress();
    const open = openCount(readFileSync(run.ctx.specPath, 'utf8'));
    const overBudget = await fleetBudgetStop(run, open);
    if (overBudget) return park(run, overBudget);
    if (reviewDue(open, state)) {
      const review = await reviewInFreshSandbox(run);
      if (review.passed) {
        const g = await graduate(run, { reviewSummary: review.summary || run.reviewSummary });
        return { kind: 'graduated', outcome: g.outcome, url: g.url };
      }
      run.reviewSummary = review.summary;
      const detained = afterFailedReview(state, limits, review.findings);
      if (detained) return park(run, detained);
      progress();
    }
    const mode = chooseMode(open, state.feedback);
    const loop = startLoop(state, limits, open);
    if (typeof loop !== 'number') return park(run, loop);
    run.tracker.loop = loop;
    const stopped = await afterLoopResult(run, await runLoop(run, { loop, mode, openBefore: open }));
    if (stopped) return stopped;
  }
}

/** What a loop's result means for the run: a detention, or null to go on (feedback and lessons set for the next loop). */
async function afterLoopResult(run: Run, r: LoopResult): Promise<RunOutcome | null> {
  const { state, limits } = run;
  const denials = r.result.denials.length;
  if (r.kind === 'blocked') {
    return park(run, { kind: 'blocked', reason: reasons.blocked(), detail: r.detail, denials });
  }
  run.base = r.base;
  if (r.ending.ended === 'progressed') {
    afterLoop(state, limits, r.ending);
    run.recallFrom = null;
    return null;
  }
  const fingerprint = r.ending.ended === 'failed' ? r.fingerprint : null;
  const verdict = r.judgement.verdict;
  if (r.judgement.stop && isStopping(verdict)) {
    return park(run, {
      kind: verdict,
      reason: reasons.verdict(verdict, r.ending.reason),
      detail: '',
      fingerprint,
      denials,
      openTicket: r.openTicket,
    });
  }
  if (r.stop) {
    const kind = asKind(r.stop.kind);
    const reason =
      kind === 'stuck' ? reasons.stuck(r.ending.reason) : `stopped by ${r.stop.by ?? 'a plugin'}: ${r.stop.reason}`;
    return park(run, { kind, reason, detail: '', fingerprint, denials, confidence: r.stop.confidence });
  }
  const detained = afterLoop(state, limits, r.ending);
  if (detained) return park(run, { ...detained, fingerprint, denials });
  // A loop the guard refused is told why; its rubric output says nothing about that.
  state.feedback = r.ending.guarded
    ? guardFeedback(r.ending.reason)
    : retryFeedback({
        reason: r.ending.reason,
        rubricLog: readOr(run.ctx.paths.rubricLog),
        fingerprint,
        fpFeedback: run.deps.config.bool('CHALK_FP_FEEDBACK'),
      });
  run.recallFrom = loopFailure(fingerprint, state.feedback);
  return null;
}

/**
 * The final review in a sandbox of its own, cloned from the ticket branch as
 * the host has it now, with its system prompt from the host: nothing the
 * loops' agent left behind (processes, files, a rewritten prompt) reaches it.
 */
async function reviewInFreshSandbox(run: Run): Promise<ReviewOutcome> {
  const { ctx, deps, log } = run;
  // Review off: nothing to start (finalReview then passes without a call).
  if (!deps.config.bool('CHALK_REVIEW')) return { passed: true, summary: '', findings: '' };
  const { session } = await openSandbox(ctx, deps, log, { runId: run.id, suffix: 'review' });
  try {
    return await finalReview(ctx, deps, session, log, { runId: run.id, signal: run.signal });
  } finally {
    await session.stop().catch(() => undefined);
  }
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
