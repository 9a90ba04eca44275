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
 * The budget a loop owns: `LOOP_BUDGET_MS` of host-service time, shared by
 * every call of the same loop. The clock runs from the first call that asks
 * for its deadline until the loop pauses it (after the prompt's recall, so the
 * agent's minutes are not charged to it); the next call's deadline resumes it
 * with what is left. Never renewed: a loop that has spent it asks nothing more.
 */
export class LoopBudget implements HostBudget {
  readonly totalMs: number;
  readonly minCallMs: number;
  private readonly now: () => number;
  /** When the running stretch began; null before the first call and while paused. */
  private startedAt: number | null = null;
  /** Spent in stretches already paused. */
  private spentBefore = 0;

  constructor(o: LoopBudgetOptions = {}) {
    this.totalMs = o.totalMs ?? LOOP_BUDGET_MS;
    this.minCallMs = o.minCallMs ?? MIN_CALL_MS;
    this.now = o.now ?? Date.now;
  }

  deadline(): number {
    this.startedAt ??= this.now();
    return this.startedAt + this.totalMs - this.spentBefore;
  }

  left(): number {
    return Math.max(0, this.totalMs - this.spent());
  }

  /** Milliseconds spent by the loop's calls so far (0 before the first). */
  spent(): number {
    const running = this.startedAt === null ? 0 : this.now() - this.startedAt;
    return Math.min(this.totalMs, this.spentBefore + running);
  }

  /** Stops the clock until the next call's deadline (what was spent stays spent). */
  pause(): void {
    if (this.startedAt === null) return;
    this.spentBefore = this.spent();
    this.startedAt = null;
  }
}
