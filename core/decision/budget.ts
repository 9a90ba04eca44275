import type { HostBudget } from '../ports/decider.js';

/** One loop's time for the host services: 2 seconds for every call together (seed: "Time is one budget per loop"). */
export const LOOP_BUDGET_MS = 2_000;
/** A call is not started with less than this left. */
export const MIN_CALL_MS = 50;

export interface LoopBudgetOptions {
  totalMs?: number;
  minCallMs?: number;
  /** Wall clock in ms (the deadline is compared with Date.now() by the clients); tests pass their own. */
  now?: () => number;
}

/**
 * The budget a loop owns: `LOOP_BUDGET_MS` from the first call that asks for
 * its deadline, shared by every later call of the same loop. Never renewed:
 * a loop that has spent it asks nothing more.
 */
export class LoopBudget implements HostBudget {
  readonly totalMs: number;
  readonly minCallMs: number;
  private readonly now: () => number;
  private startedAt: number | null = null;

  constructor(o: LoopBudgetOptions = {}) {
    this.totalMs = o.totalMs ?? LOOP_BUDGET_MS;
    this.minCallMs = o.minCallMs ?? MIN_CALL_MS;
    this.now = o.now ?? Date.now;
  }

  deadline(): number {
    this.startedAt ??= this.now();
    return this.startedAt + this.totalMs;
  }

  left(): number {
    if (this.startedAt === null) return this.totalMs;
    return Math.max(0, this.startedAt + this.totalMs - this.now());
  }

  /** Milliseconds spent since the first call (0 before it). */
  spent(): number {
    return this.startedAt === null ? 0 : Math.min(this.totalMs, this.now() - this.startedAt);
  }
}
