import { readFileSync } from 'node:fs';
import { describeEnvironment } from '../../fingerprint/environment.js';
import { retryFeedback } from '../../fingerprint/feedback.js';
import { isStopping } from '../../fingerprint/verdict.js';
import type { RunEndEvent, RunStartEvent } from '../../kernel/hooks.js';
import type { SandboxSession } from '../../ports/sandbox.js';
import { holdSpawner } from '../../process/spawner.js';
import { openCount } from '../../spec/checkpoints.js';
import { type ClaimOptions, claim } from '../base/claim.js';
import { type RunContext, resolveContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { type DetentionKind, reasons } from '../base/detention-reasons.js';
import { CallTracker, recordOnAbort, trackingAgent } from '../base/interrupt.js';
import {
  afterFailedReview,
  afterLoop,
  chooseMode,
  countsOf,
  guardFeedback,
  reviewDue,
  startLoop,
} from '../base/policy.js';
import { newRun, type Run } from '../base/run.js';
import { openSandbox, settingsLines, startServices } from '../base/session.js';
import { DETENTION_EXIT, type DetainInput, detain } from '../endings/detention.js';
import { graduate } from '../endings/graduation.js';
import { type RunRecorder, recordRun, startOrResume } from '../resume/run-record.js';
import { BASE_RED_EXIT, ENVIRONMENT_EXIT, environmentLine, redBaseLine } from './base-rules.js';
import { checkBase } from './baseline.js';
import { fleetBudgetStop } from './fleet-budget.js';
import { type LoopResult, runLoop } from './loop-step.js';
import { loopFailure } from './recall.js';
import { finalReview, type ReviewOutcome } from './review.js';
import { setupSandbox } from './setup-state.js';
import { specCheck } from './spec-check.js';
import { headRubric } from './step-head-rubric.js';

/** The exit code of a run whose spec check failed. */
export const SPEC_BLOCKED_EXIT = 4;

export type RunOutcome =
  | { kind: 'graduated'; outcome: 'opened' | 'pushed' | 'ready'; url: string | null }
  | { kind: 'detained'; branch: string; reason: string; detentionKind: DetentionKind }
  | { kind: 'spec-blocked' }
  /** Stopped before any agent call: the base is red, or the rubric cannot start in the sandbox. */
  | { kind: 'base-red'; line: string; environment: boolean };

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
  /** Open the request whatever CHALK_AUTO_MR says (office hours: a person asked). */
  forceRequest?: boolean;
}

export { limitsFrom } from '../base/run.js';

/**
 * `chalk run`: context and refusals, claim, database and image, which image
 * and limits apply and who chose them, the sandbox,
 * the setup command, the spec check, then loops until every checkpoint is
 * ticked, the final review, and graduation, or detention. The sandbox is
 * removed and the claim released on every way out. Process signals are the
 * edge's: it aborts `signal`, and the call in flight is recorded `interrupted`.
 */
export async function runTicket(given: RunDeps, opts: RunTicketOptions): Promise<RunResult> {
  const ctx =
    opts.ctx ??
    (await resolveContext({
      root: opts.root,
      config: given.config,
      env: given.env,
      git: given.git,
      agent: given.agent,
    }));
  const tracker = new CallTracker();
  const deps: RunDeps = { ...given, agent: trackingAgent(given.agent, tracker, () => given.clock.now().getTime()) };
  const log = deps.log.child(`[${ctx.ticket}] `);
  const release = claim(ctx.paths, ctx.ticket, opts.atExit ? { atExit: opts.atExit } : {});
  // Host programs (git, a dozen times a loop) start from the small process helper while the run lasts.
  const letGo = holdSpawner();
  let session: SandboxSession | null = null;
  let unhook = () => {};
  let started: RunStartEvent | null = null;
  let ending: Omit<RunEndEvent, keyof RunStartEvent> = { ending: 'error', error: 'the run stopped' };
  try {
    // A run that ended without an ending (killed, interrupted) is continued: run-record.ts, resume.ts.
    const start = await startOrResume(ctx, deps, log);
    const { id } = start;
    const record = recordRun(ctx.paths, start, deps.clock);
    started = { ticket: ctx.ticket, repo: ctx.repo, runId: id, resumed: start.resumed };
    await deps.hooks.runStart.promise(started);
    await startServices(deps, log);
    for (const line of await settingsLines(deps)) log.info(line);
    const opened = await openSandbox(ctx, deps, log, { runId: id });
    session = opened.session;
    unhook = recordOnAbort({ ctx, deps, tracker, runId: id, signal: opts.signal, onInterrupt: opts.onInterrupt });
    const { base } = opened;
    const run = newRun({ ctx, deps, session, log, id, signal: opts.signal, tracker, base, counts: start.counts });
    await setupSandbox(ctx, deps, log, opened, { runSetup: true, signal: opts.signal });
    const red = await redBase(run, opened.forkPoint);
    if (red) {
      record.end('base-red', start.counts);
      ending = { ending: 'base-red' };
      return { ctx, outcome: red, exitCode: red.environment ? ENVIRONMENT_EXIT : BASE_RED_EXIT };
    }
    if (deps.config.bool('CHALK_SPEC_CHECK')) {
      const check = await specCheck(ctx, deps, session, log, { runId: id, signal: opts.signal });
      if (check === 'fail') {
        record.end('spec-blocked', start.counts);
        ending = { ending: 'spec-blocked' };
        return { ctx, outcome: { kind: 'spec-blocked' }, exitCode: SPEC_BLOCKED_EXIT };
      }
    }
    const outcome = await loops(run, record, opts.forceRequest === true);
    record.end(outcome.kind, countsOf(run.state));
    ending = { ending: outcome.kind };
    const exitCode = outcome.kind === 'detained' ? DETENTION_EXIT : 0;
    return { ctx, outcome, exitCode };
  } catch (err) {
    ending = { ending: 'error', error: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '' };
    throw err;
  } finally {
    unhook();
    if (session) await session.stop().catch(() => undefined);
    // Every run that was told it started is told it ended, however it ended.
    if (started) await deps.hooks.runEnd.promise({ ...started, ...ending });
    release();
    letGo();
  }
}

/**
 * The base, before any agent call (baseline.ts): null to go on (green, or its failing tests
 * taken as the baseline under CHALK_BASELINE=known), else the one line the run stops with.
 */
async function redBase(run: Run, baseCommit: string | null): Promise<Extract<RunOutcome, { kind: 'base-red' }> | null> {
  const base = await checkBase(run, { baseCommit });
  if (!base || base.judgement.kind === 'green') return null;
  if (base.judgement.kind === 'known') {
    run.baseline = base.judgement.failures;
    return null;
  }
  const environment = base.judgement.kind === 'environment';
  const line =
    base.judgement.kind === 'environment'
      ? environmentLine(base.judgement.failure, run.ctx.paths.baseRubricLog)
      : redBaseLine(base.result, base.commit);
  run.log.info(line);
  return { kind: 'base-red', line, environment };
}

async function park(run: Run, d: DetainInput): Promise<RunOutcome> {
  const { branch } = await detain(run, { ...d, egressBlocked: run.egressBlocked });
  return { kind: 'detained', branch, reason: d.reason, detentionKind: d.kind };
}

/**
 * The loops, the final review when every checkpoint is ticked, then graduation or detention.
 * The review comes only once the rubric has passed on the host's HEAD (headRubric when no loop
 * of this run saw it), and graduation takes only the HEAD the rubric and the review both saw.
 */
async function loops(run: Run, record: RunRecorder, force: boolean): Promise<RunOutcome> {
  const { state, limits } = run;
  // What the run has done so far, for a resume if it is killed (run-record.ts).
  const progress = () => record.progress(countsOf(state));
  for (;;) {
    progress();
    const open = openCount(await run.specs.text(run.base));
    const overBudget = await fleetBudgetStop(run, open);
    if (overBudget) return park(run, overBudget);
    if (reviewDue(open, state) && run.greenAt !== run.base) {
      const head = await headRubric(run);
      if (!head.passed) {
        // A fix-review loop makes it pass; it counts as any loop does.
        state.findings = head.finding;
        continue;
      }
    }
    if (reviewDue(open, state)) {
      const sealed = run.base;
      const review = await reviewInFreshSandbox(run);
      if (review.passed) {
        const g = await graduate(run, {
          reviewSummary: review.summary || run.reviewSummary,
          force,
          sealed,
          baselineFailures: run.baseline,
        });
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
  if (r.environment) {
    const reason = reasons.environment(describeEnvironment(r.environment));
    return park(run, { kind: 'environment', reason, detail: '', denials, command: r.environment.command });
  }
  if (r.ending.ended === 'progressed') {
    afterLoop(state, limits, r.ending);
    run.recallFrom = null;
    return null;
  }
  // Commits refused on their way home stop the run before any verdict or plugin is asked.
  const refused = r.ending.refused ? afterLoop(state, limits, r.ending) : null;
  if (refused) return park(run, { ...refused, denials });
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
    // The request carries its own detention (kind, reason, next line); an unclassified one is attributed.
    const { kind = 'other', next } = r.stop;
    const reason = r.stop.kind ? r.stop.reason : `stopped by ${r.stop.by ?? 'a plugin'}: ${r.stop.reason}`;
    return park(run, { kind, reason, detail: '', fingerprint, denials, ...(next !== undefined ? { next } : {}) });
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
  const opened = await openSandbox(ctx, deps, log, { runId: run.id, suffix: 'review' });
  const { session } = opened;
  try {
    // The reviewer may run the tests: the saved setup state is there when there is one.
    await setupSandbox(ctx, deps, log, opened, { runSetup: false, signal: run.signal });
    return await finalReview(ctx, deps, session, log, {
      runId: run.id,
      signal: run.signal,
      baselineFailures: run.baseline,
    });
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
