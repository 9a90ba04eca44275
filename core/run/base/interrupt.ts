import { type Agent, type CallKind, isLoopKind } from '../../ports/agent.js';
import type { CallRecord } from '../../ports/store.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';

/**
 * A run stopped by SIGINT or SIGTERM in the middle of an agent call still
 * leaves a `runs` row for that call (agent status `interrupted`, no cost
 * known), so `chalk status` shows the ticket `stopped` rather than `new`.
 * The edge (cli/run.ts) turns the signal into the run's AbortSignal; the
 * sandbox's own signal handlers remove the container and exit.
 */

export interface InFlight {
  kind: CallKind;
  loop: number;
  startedAt: number;
}

/** Knows which agent call is running, if any. */
export class CallTracker {
  current: InFlight | null = null;
  /** The loop number the next loop call belongs to. */
  loop = 0;
}

/** The agent, with each call registered on the tracker while it runs. */
export function trackingAgent(agent: Agent, tracker: CallTracker, now: () => number): Agent {
  return {
    async call(kind, prompt, opts) {
      tracker.current = { kind, loop: isLoopKind(kind) ? tracker.loop : 0, startedAt: now() };
      try {
        return await agent.call(kind, prompt, opts);
      } finally {
        tracker.current = null;
      }
    },
    modelFor: (kind) => agent.modelFor(kind),
    cannotRun: (env) => agent.cannotRun(env),
  };
}

/** The row of a call cut short by a signal. */
export function interruptedRecord(ctx: RunContext, deps: RunDeps, f: InFlight, runId: string, now: number): CallRecord {
  const model = deps.agent.modelFor(f.kind);
  return {
    repo: ctx.repo,
    ticket: ctx.ticket,
    branch: ctx.branch,
    loop: f.loop,
    kind: f.kind,
    agentStatus: 'interrupted',
    rubricExit: 0,
    progressed: false,
    model: model || 'default',
    prompts: ctx.promptHash,
    costUsd: 0,
    budgetUsd: deps.config.num('CHALK_BUDGET_USD'),
    durationS: Math.max(0, Math.round((now - f.startedAt) / 1000)),
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    turns: 0,
    denials: 0,
    lessons: 0,
    runId,
    fpRules: deps.config.str('CHALK_FP_RULES'),
  };
}

export interface InterruptOptions {
  ctx: RunContext;
  deps: RunDeps;
  tracker: CallTracker;
  runId: string;
  /** The run's signal, aborted by the edge (the CLI's SIGINT/SIGTERM handlers, or a test). */
  signal?: AbortSignal;
  /** Given the record's promise when the signal aborts, so the edge can wait for it before exiting. */
  onInterrupt?: (recorded: Promise<void>) => void;
}

/**
 * When the run's signal aborts, records the call in flight (if any) as
 * `interrupted`. No process signal is touched here: the edge owns those and
 * turns them into the abort. Returns the uninstaller.
 */
export function recordOnAbort(o: InterruptOptions): () => void {
  const { signal } = o;
  if (!signal) return () => {};
  const onAbort = () => {
    const f = o.tracker.current;
    o.tracker.current = null;
    const recorded = f
      ? o.deps.store.calls.record(interruptedRecord(o.ctx, o.deps, f, o.runId, o.deps.clock.now().getTime())).then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
    o.onInterrupt?.(recorded);
  };
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
