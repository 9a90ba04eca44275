import { settingsFrom } from '../agent/driver.js';
import { modelFor } from '../agent/invocation.js';
import type { Agent, CallKind } from '../ports/agent.js';
import type { CallRecord } from '../ports/store.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';

/**
 * A run stopped by SIGINT or SIGTERM in the middle of an agent call still
 * leaves a `runs` row for that call (agent status `interrupted`, no cost
 * known), so `chalk status` shows the ticket `stopped` rather than `new`.
 * The sandbox's own signal handlers remove the container and exit.
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

const LOOP_KINDS = new Set(['continue', 'retry', 'fix-review']);

/** The agent, with each call registered on the tracker while it runs. */
export function trackingAgent(agent: Agent, tracker: CallTracker, now: () => number): Agent {
  return {
    async call(kind, prompt, opts) {
      tracker.current = { kind, loop: LOOP_KINDS.has(kind) ? tracker.loop : 0, startedAt: now() };
      try {
        return await agent.call(kind, prompt, opts);
      } finally {
        tracker.current = null;
      }
    },
  };
}

/** The row of a call cut short by a signal. */
export function interruptedRecord(ctx: RunContext, deps: RunDeps, f: InFlight, runId: string, now: number): CallRecord {
  const model = modelFor(f.kind, settingsFrom(deps.config));
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

/**
 * On SIGINT/SIGTERM, records the call in flight. Installed after the sandbox
 * opened, so its handlers (which remove the container, then exit 130/143)
 * run too; if no other handler is there, this one exits. Returns the uninstaller.
 */
export function recordOnSignal(ctx: RunContext, deps: RunDeps, tracker: CallTracker, runId: string): () => void {
  const handlers: Array<[NodeJS.Signals, () => void]> = (
    [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const
  ).map(([sig, code]) => [
    sig,
    () => {
      const f = tracker.current;
      tracker.current = null;
      const alone = process.listenerCount(sig) <= 1;
      const done = f
        ? deps.store.calls.record(interruptedRecord(ctx, deps, f, runId, deps.clock.now().getTime())).catch(() => 0)
        : Promise.resolve(0);
      if (alone) void done.finally(() => process.exit(code));
    },
  ]);
  for (const [sig, h] of handlers) process.on(sig, h);
  return () => {
    for (const [sig, h] of handlers) process.off(sig, h);
  };
}
