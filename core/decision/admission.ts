import type { AdmissionLimit } from '../protocol/entry.js';
import { DecisionFailure } from '../protocol/failure.js';

/** What a granted call holds until it ends. */
export interface Grant {
  /** Returns a concurrency permit; a quota window's tokens are spent, so this is a no-op there. */
  release(): void;
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** Absolute time (ms since the epoch) after which the call cannot be sent: `budget`. */
  deadline?: number;
  /** How long the call may wait for its turn before it gives up: `busy`. */
  maxWaitMs?: number;
}

interface Waiter {
  demand: number;
  grant: (g: Grant) => void;
  fail: (f: DecisionFailure) => void;
  cleanup: () => void;
}

/**
 * Admission on one entry's account: a single FIFO line in front of either a
 * concurrency gate (one permit per call, returned when the call ends, never by
 * the clock) or a token bucket (a call takes its reservation, refilled at the
 * window's rate). Grants are all-or-nothing and in arrival order; a waiting call
 * holds nothing, and leaving the line (abort, deadline, wait) takes nothing with
 * it. Waits for tokens are computed deadlines, never polling.
 */
export class Admission {
  private readonly line: Waiter[] = [];
  private permits = 0;
  private tokens = 0;
  private refilledAt: number;
  private timer: NodeJS.Timeout | null = null;
  /** Most calls in flight at once (concurrency gates), for tests and status. */
  peak = 0;
  inFlight = 0;

  constructor(
    readonly limit: AdmissionLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (limit.kind === 'concurrency') this.permits = limit.maxConcurrent;
    else this.tokens = limit.burst;
    this.refilledAt = now();
  }

  /** Calls waiting for their turn. */
  get waiting(): number {
    return this.line.length;
  }

  /** A demand the entry can never grant (a reservation over the bucket's size). */
  refuses(demand: number): string | null {
    if (this.limit.kind === 'window' && demand > this.limit.burst) {
      return `a reservation of ${demand} tokens is over what the quota window holds (${this.limit.burst})`;
    }
    return null;
  }

  /** A grant now, without waiting, when nobody is in line and there is room; null otherwise. */
  tryAcquire(demand: number): Grant | null {
    return this.line.length === 0 ? this.take(demand) : null;
  }

  /** Waits in line for one permit (concurrency) or `demand` tokens (window). */
  acquire(demand: number, opts: WaitOptions = {}): Promise<Grant> {
    const refused = this.refuses(demand);
    if (refused) return Promise.reject(new DecisionFailure('too_large', refused));
    if (opts.signal?.aborted) return Promise.reject(new DecisionFailure('cancelled', 'cancelled before its turn'));
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
      return Promise.reject(new DecisionFailure('budget', 'the time for this call was used up before it was sent'));
    }
    // The fast path: nobody in line and room now. No timers are armed for a call that never waits.
    if (this.line.length === 0) {
      const now = this.take(demand);
      if (now) return Promise.resolve(now);
    }
    return new Promise<Grant>((resolve, reject) => {
      const timers: NodeJS.Timeout[] = [];
      const leave = (failure: DecisionFailure) => {
        const i = this.line.indexOf(waiter);
        if (i < 0) return;
        this.line.splice(i, 1);
        waiter.cleanup();
        reject(failure);
        this.pump();
      };
      const onAbort = () => leave(new DecisionFailure('cancelled', 'cancelled while waiting for its turn'));
      const waiter: Waiter = {
        demand,
        grant: resolve,
        fail: reject,
        cleanup: () => {
          for (const t of timers) clearTimeout(t);
          opts.signal?.removeEventListener('abort', onAbort);
        },
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.deadline !== undefined) {
        const ms = Math.max(0, opts.deadline - Date.now());
        timers.push(
          setTimeout(() => leave(new DecisionFailure('budget', 'the time for this call ran out while it waited')), ms),
        );
      }
      if (opts.maxWaitMs !== undefined) {
        const ms = opts.maxWaitMs;
        timers.push(setTimeout(() => leave(new DecisionFailure('busy', `its turn did not come within ${ms} ms`)), ms));
      }
      this.line.push(waiter);
      this.pump();
    });
  }

  /** Takes a permit or `demand` tokens if there is room now; null otherwise. */
  private take(demand: number): Grant | null {
    if (this.limit.kind === 'concurrency') {
      if (this.permits < 1) return null;
      this.permits -= 1;
      this.inFlight += 1;
      this.peak = Math.max(this.peak, this.inFlight);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          this.permits += 1;
          this.inFlight -= 1;
          if (this.line.length > 0) this.pump();
        },
      };
    }
    this.refill();
    if (this.tokens + 1e-9 < demand) return null;
    this.tokens -= demand;
    return { release: () => {} };
  }

  private refill(): void {
    if (this.limit.kind !== 'window') return;
    const t = this.now();
    const perMs = this.limit.tokensPerMinute / 60_000;
    this.tokens = Math.min(this.limit.burst, this.tokens + (t - this.refilledAt) * perMs);
    this.refilledAt = t;
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.refill();
    for (;;) {
      const head = this.line[0];
      if (!head) return;
      const grant = this.take(head.demand);
      if (!grant) {
        if (this.limit.kind === 'window') {
          const perMs = this.limit.tokensPerMinute / 60_000;
          const wait = Math.max(1, Math.ceil((head.demand - this.tokens) / perMs));
          this.timer = setTimeout(() => {
            this.timer = null;
            this.pump();
          }, wait);
        }
        return;
      }
      this.line.shift();
      head.cleanup();
      head.grant(grant);
    }
  }
}
