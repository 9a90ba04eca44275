import { readFileSync } from 'node:fs';
import { retryFeedback } from '../fingerprint/feedback.js';
import { type RulesMode, VerdictStreak } from '../fingerprint/streak.js';
import type { Log } from '../ports/log.js';
import type { SandboxSession } from '../ports/sandbox.js';
import { openCount } from '../spec/checkpoints.js';
import { claim } from './claim.js';
import { type RunContext, resolveContext } from './context.js';
import type { RunDeps } from './deps.js';
import { DETENTION_EXIT, type DetainInput, detain } from './detention.js';
import { DETENTION_KINDS, type DetentionKind, reasons } from './detention-reasons.js';
import { graduate } from './graduation.js';
import { CallTracker, recordOnSignal, trackingAgent } from './interrupt.js';
import { runLoop } from './loop-step.js';
import {
  afterFailedReview,
  afterLoop,
  chooseMode,
  guardFeedback,
  type Limits,
  LoopState,
  reviewDue,
  startLoop,
} from './policy.js';
import { finalReview, type ReviewOutcome } from './review.js';
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
  signal?: AbortSignal;
}

export const limitsFrom = (deps: RunDeps): Limits => ({
  maxLoops: deps.config.num('CHALK_MAX_LOOPS'),
  maxRetries: deps.config.num('CHALK_MAX_RETRIES'),
  reviewRounds: deps.config.num('CHALK_REVIEW_ROUNDS'),
});

const asKind = (k: string | undefined): DetentionKind =>
  (DETENTION_KINDS as readonly string[]).includes(k ?? '') ? (k as DetentionKind) : 'other';

async function recallLessons(ctx: RunContext, deps: RunDeps, text: string, log: Log): Promise<string[]> {
  try {
    const found = await deps.store.lessons.recall({ repo: ctx.repo, text, limit: 3 });
    return found.map((l) => (l.lesson ?? l.resolution ?? '').trim()).filter((l) => l !== '');
  } catch (err) {
    log.debug(`lesson recall failed: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
}

/**
 * `chalk run`: context and refusals, claim, database and image, the sandbox,
 * the setup command, the spec check, then loops until every checkpoint is
 * ticked, the final review, and graduation, or detention. The sandbox is
 * removed and the claim released on every way out.
 */
export async function runTicket(given: RunDeps, opts: RunTicketOptions): Promise<RunResult> {
  const ctx = opts.ctx ?? (await resolveContext({ root: opts.root, config: given.config, env: given.env }));
  const tracker = new CallTracker();
  const deps: RunDeps = { ...given, agent: trackingAgent(given.agent, tracker, () => given.clock.now().getTime()) };
  const log = deps.log.child(`[${ctx.ticket}] `);
  const release = claim(ctx.paths, ctx.ticket);
  const runId = `${ctx.ticket}-${Math.floor(deps.clock.now().getTime() / 1000)}`;
  let session: SandboxSession | null = null;
  let unhook = () => {};
  try {
    await startServices(deps, log);
    const opened = await openSandbox(ctx, deps, log, { runId });
    session = opened.session;
    unhook = recordOnSignal(ctx, deps, tracker, runId);
    await runSetup(ctx, session, deps, log);
    if (deps.config.bool('CHALK_SPEC_CHECK')) {
      const check = await specCheck(ctx, deps, session, log, { runId, signal: opts.signal });
      if (check === 'fail') return { ctx, outcome: { kind: 'spec-blocked' }, exitCode: SPEC_BLOCKED_EXIT };
    }
    const outcome = await loops(ctx, deps, session, opened.base, runId, log, tracker, opts.signal);
    const exitCode = outcome.kind === 'detained' ? DETENTION_EXIT : 0;
    return { ctx, outcome, exitCode };
  } finally {
    unhook();
    if (session) await session.stop().catch(() => undefined);
    release();
  }
}

async function loops(
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  startBase: string,
  runId: string,
  log: Log,
  tracker: CallTracker,
  signal?: AbortSignal,
): Promise<RunOutcome> {
  const limits = limitsFrom(deps);
  const state = new LoopState();
  const streak = new VerdictStreak(deps.config.str('CHALK_FP_RULES') as RulesMode);
  let base = startBase;
  let lessons: string[] = [];
  let reviewSummary = '';
  const park = async (d: Omit<DetainInput, 'runId'>): Promise<RunOutcome> => {
    const { branch } = await detain(ctx, deps, session, base, { ...d, runId }, log);
    return { kind: 'detained', branch, reason: d.reason, detentionKind: d.kind };
  };

  for (;;) {
    const open = openCount(readFileSync(ctx.specPath, 'utf8'));
    if (reviewDue(open, state)) {
      const review = await reviewInFreshSandbox(ctx, deps, log, { runId, signal });
      if (review.passed) {
        const g = await graduate(ctx, deps, log, { reviewSummary: review.summary || reviewSummary });
        return { kind: 'graduated', outcome: g.outcome, url: g.url };
      }
      reviewSummary = review.summary;
      const detained = afterFailedReview(state, limits, review.findings);
      if (detained) return park(detained);
    }
    const mode = chooseMode(open, state.feedback);
    const loop = startLoop(state, limits, open);
    if (typeof loop !== 'number') return park(loop);
    tracker.loop = loop;

    const r = await runLoop(
      ctx,
      deps,
      session,
      streak,
      { loop, mode, openBefore: open, feedback: state.feedback, findings: state.findings, lessons, base, runId },
      log,
      signal,
    );
    const denials = r.result.denials.length;
    if (r.kind === 'blocked') {
      return park({ kind: 'blocked', reason: reasons.blocked(), detail: r.detail, denials });
    }
    base = r.base;
    if (r.ending.ended === 'progressed') {
      afterLoop(state, limits, r.ending);
      lessons = [];
      continue;
    }
    const fingerprint = r.ending.ended === 'failed' ? r.fingerprint : null;
    const verdict = r.judgement.verdict;
    if (r.judgement.stop && (verdict === 'deja_vu' || verdict === 'repeat' || verdict === 'no_change')) {
      return park({
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
      return park({ kind, reason, detail: '', fingerprint, denials, confidence: r.stop.confidence });
    }
    const detained = afterLoop(state, limits, r.ending);
    if (detained) return park({ ...detained, fingerprint, denials });
    // A loop the guard refused is told why; its rubric output says nothing about that.
    state.feedback = r.ending.guarded
      ? guardFeedback(r.ending.reason)
      : retryFeedback({
          reason: r.ending.reason,
          rubricLog: readOr(ctx.paths.rubricLog),
          fingerprint,
          fpFeedback: deps.config.bool('CHALK_FP_FEEDBACK'),
        });
    lessons = await recallLessons(ctx, deps, state.feedback, log);
  }
}

/**
 * The final review in a sandbox of its own, cloned from the ticket branch as
 * the host has it now, with its system prompt from the host: nothing the
 * loops' agent left behind (processes, files, a rewritten prompt) reaches it.
 */
async function reviewInFreshSandbox(
  ctx: RunContext,
  deps: RunDeps,
  log: Log,
  opts: { runId: string; signal?: AbortSignal },
): Promise<ReviewOutcome> {
  // Review off: nothing to start (finalReview then passes without a call).
  if (!deps.config.bool('CHALK_REVIEW')) return { passed: true, summary: '', findings: '' };
  const { session } = await openSandbox(ctx, deps, log, { runId: opts.runId, suffix: 'review' });
  try {
    return await finalReview(ctx, deps, session, log, opts);
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
