import { EventEmitter } from 'node:events';

/**
 * One call's abort source: the caller's signal and the time left, as an
 * EventEmitter (undici takes one as a request's signal, and it costs less per
 * call than an AbortSignal; measured in bench/decision).
 *
 * The time left is not a timer per call: every open call is watched by one
 * process-wide timer armed at the earliest deadline (see `watch`). Arming and
 * clearing a timer per call cost more than the rest of the client's own work
 * on a local round trip; with one shared timer a steady stream of calls re-arms
 * it only when a call's deadline is earlier than the one it is armed for.
 */
export class CallDeadline extends EventEmitter {
  /** Read by undici: a signal that is already aborted fails the request before it is sent. */
  aborted = false;
  private expired = false;

  constructor(
    /** Absolute time (ms since the epoch) the call must be done by. */
    readonly at: number,
    private readonly caller?: AbortSignal,
  ) {
    super();
    watch(this);
    if (caller) {
      caller.addEventListener('abort', this.onCallerAbort, { once: true });
      if (caller.aborted) queueMicrotask(this.onCallerAbort);
    }
  }

  private readonly onCallerAbort = () => this.abort();

  /** True when the call ended because its time ran out (not because the caller cancelled). */
  timedOut(): boolean {
    return this.expired;
  }

  /** The time ran out: abort the request. */
  expire(): void {
    this.expired = true;
    this.abort();
  }

  private abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }

  /** The call is over: stop watching it. */
  done(): void {
    live.delete(this);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}

const live = new Set<CallDeadline>();
let timer: NodeJS.Timeout | null = null;
let armedFor = Number.POSITIVE_INFINITY;

function watch(call: CallDeadline): void {
  live.add(call);
  if (call.at < armedFor) arm(call.at);
}

function arm(at: number): void {
  if (timer) clearTimeout(timer);
  armedFor = at;
  timer = setTimeout(fire, Math.max(1, at - Date.now()));
  // An open call keeps the process alive through its socket; the timer must not
  // keep it alive after the last call ended.
  timer.unref();
}

function fire(): void {
  timer = null;
  armedFor = Number.POSITIVE_INFINITY;
  const now = Date.now();
  let next = Number.POSITIVE_INFINITY;
  for (const call of live) {
    if (call.at <= now) {
      live.delete(call);
      call.expire();
    } else if (call.at < next) {
      next = call.at;
    }
  }
  if (next !== Number.POSITIVE_INFINITY) arm(next);
}
