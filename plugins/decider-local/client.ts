import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DecisionFailure, type DecisionRequest, HttpDecider, type HttpDeciderOptions } from '../../core/decider.js';
import { waitForTurn } from '../../core/host.js';
import type { DecideOptions, DecisionReply, HealthReport } from '../../core/plugin.js';

/** The longest a question waits for its turn at the local service. */
export const TURN_WAIT_MS = 1_000;
/** A call is not sent with less than this left (the loop's budget rule). */
export const MIN_CALL_MS = 50;

export interface LocalDeciderOptions extends HttpDeciderOptions {
  /** The machine-wide lock every chalk process takes turns at (LocalDeciderPaths.askLock). */
  askLock: string;
  /** Touched on every question, so the idle watcher knows the service is in use. */
  lastUsed?: string;
  /** Called when a question found nothing listening (the run may start the service, never waiting on it). */
  onUnreachable?: () => void;
  /** Why nothing listens yet though the service is on its way (its process lives, within its start time), or null. */
  starting?: () => string | null;
  /** Overrides TURN_WAIT_MS (tests of the rule only). */
  turnWaitMs?: number;
  /**
   * The installed model's revision: answers name the model as `<model>@<first 7>`, so a new
   * revision is a new model to calibrate (the server names only the checkpoint).
   */
  revision?: string;
  /** The median answer time `chalk decider up` measured (ms), or null when it was not measured. */
  medianMs?: number | null;
}

/** A local service whose measured median is at or over this is too slow for `on`. */
export const SLOW_MEDIAN_MS = 1_000;

/** Marks the service as used now (the idle watcher reads the file's time). */
export function touch(file: string): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, '', { mode: 0o600 });
  }
}

/**
 * The local decider: decider protocol v1 to strands-decider on this machine's loopback
 * (the same client as the hosted decider), taking turns. The service answers one question
 * at a time, so every chalk process on the machine takes turns at one lock: a question
 * waits at most a second for its turn, out of the time its caller gave it, then fails
 * `busy` without sending anything. The health probe (a real question) takes a turn too;
 * `GET /health` does not need one.
 */
export class LocalDecider extends HttpDecider {
  override readonly name: string = 'local';
  private readonly askLock: string;
  private readonly lastUsed: string | undefined;
  private readonly onUnreachable: (() => void) | undefined;
  private readonly starting: (() => string | null) | undefined;
  private readonly turnWaitMs: number;
  private readonly revision: string | undefined;
  private readonly medianMs: number | null | undefined;

  constructor(opts: LocalDeciderOptions) {
    super(opts);
    this.askLock = opts.askLock;
    this.lastUsed = opts.lastUsed;
    this.onUnreachable = opts.onUnreachable;
    this.starting = opts.starting;
    this.turnWaitMs = opts.turnWaitMs ?? TURN_WAIT_MS;
    this.revision = opts.revision;
    this.medianMs = opts.medianMs;
    mkdirSync(dirname(opts.askLock), { recursive: true, mode: 0o700 });
  }

  /** `on` records as shadow on a machine where the service was measured at a median of 1 s or more, or never measured. */
  holdReason(): string | null {
    if (this.medianMs === undefined) return null;
    if (this.medianMs === null) return 'the local decider was never measured on this machine (run: chalk decider up)';
    if (this.medianMs < SLOW_MEDIAN_MS) return null;
    return `the local decider answers in a median of ${this.medianMs} ms on this machine (chalk decider up measured it), and a loop can wait under 1 s`;
  }

  /** `<model>@<revision's first 7>`, unless the server already named a revision. */
  private named(model: string): string {
    return this.revision && !model.includes('@') ? `${model}@${this.revision.slice(0, 7)}` : model;
  }

  override async health(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<HealthReport> {
    const h = await super.health(opts);
    return h.model ? { ...h, model: this.named(h.model) } : h;
  }

  override async decide(req: DecisionRequest, opts: DecideOptions = {}): Promise<DecisionReply> {
    const refused = this.unavailable();
    if (refused) return super.decide(req, opts);
    if (opts.signal?.aborted) return super.decide(req, opts);
    const started = Date.now();
    const deadline = opts.deadline ?? started + 60_000;
    const left = deadline - started;
    if (left < MIN_CALL_MS) {
      return fail('budget', `${Math.max(0, left)} ms left, under the ${MIN_CALL_MS} ms a call needs`);
    }
    const release = await waitForTurn(this.askLock, {
      waitMs: Math.min(this.turnWaitMs, left - MIN_CALL_MS),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (!release) {
      if (opts.signal?.aborted) return fail('cancelled', 'cancelled while waiting for its turn');
      return fail(
        'busy',
        `no turn at the local decider within ${Date.now() - started} ms (another question was being answered)`,
      );
    }
    try {
      if (deadline - Date.now() < MIN_CALL_MS) {
        return fail('busy', `its turn came ${Date.now() - started} ms later, with too little time left to ask`);
      }
      if (this.lastUsed) touch(this.lastUsed);
      const reply = await super.decide(req, { ...opts, deadline });
      if (!reply.ok && reply.failure.kind === 'unreachable') {
        const starting = this.starting?.();
        if (starting) return fail('starting', starting);
        this.onUnreachable?.();
      }
      return reply.ok && this.revision
        ? { ok: true, response: { ...reply.response, model: this.named(reply.response.model) } }
        : reply;
    } finally {
      release();
    }
  }
}

function fail(kind: 'budget' | 'busy' | 'cancelled' | 'starting', message: string): DecisionReply {
  return { ok: false, failure: new DecisionFailure(kind, message, { retryable: false }) };
}
