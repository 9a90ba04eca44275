import type { DecisionResponse } from '../protocol/codec.js';
import type { DeciderEntry } from '../protocol/entry.js';
import type { DecisionFailure } from '../protocol/failure.js';
import type { DecisionRequest } from '../protocol/questions.js';

export interface DecideOptions {
  signal?: AbortSignal;
  /** Absolute time (ms since the epoch) by which the answer must be complete, else `timeout`. */
  deadline?: number;
}

/** One round trip's outcome: the response, or a classified failure. A client never throws for the wire. */
export type DecisionReply = { ok: true; response: DecisionResponse } | { ok: false; failure: DecisionFailure };

/**
 * The decision client family: one round trip of decider protocol v1, no
 * admission, no retries, no record (core/decision's DecisionCall adds those).
 */
export interface DecisionClient {
  decide(request: DecisionRequest, opts: DecideOptions): Promise<DecisionReply>;
}

export interface HealthReport {
  healthy: boolean;
  /** `ok`, or why not: `unreachable`, `starting`, `version`, `untrusted`, `HTTP 503`... */
  status: string;
  model?: string;
  /** The model's revision, when the decider's /health names one (`revision`). */
  revision?: string;
  /** How health was learned: `/health`, or the smallest real request when /health is absent. */
  via: 'health' | 'probe' | 'none';
  detail?: string;
}

/**
 * The decider: a small, fast model answering bounded, typed questions over one
 * HTTP protocol (v1, `POST /v1/systemone`). A provider (hosted, local) is a
 * DecisionClient with its entry (where it is, its context ceiling, its
 * admission limit); core/decision's `runtimeFor(decider)` puts admission,
 * retries and the record in front of it.
 */
export interface Decider extends DecisionClient {
  readonly name: string;
  readonly entry: DeciderEntry;
  /** Why this decider must be sent nothing (e.g. an untrusted address), or null when it may be asked. */
  unavailable(): string | null;
  /**
   * Why `CHALK_DECIDER=on` must only record (as shadow) with this provider whatever its
   * calibration, e.g. a local service measured slower than a loop can wait; null when nothing
   * holds it. Optional: a provider without it is never held.
   */
  holdReason?(): string | null;
  /** Health per the protocol page: `/health`, else one probe when it answers 404/405. */
  health(opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<HealthReport>;
  /** Closes the connections it keeps (so a command exits at once). */
  close?(): Promise<void>;
}

/**
 * The time one loop may spend on the host services (the decider today; the
 * embedding and rerank calls later), shared by every call the loop makes to
 * them. The loop owns one per loop and hands it to each asker; each call gets
 * what is left. Its clock starts at the first call.
 */
export interface HostBudget {
  /** Absolute time (ms since the epoch) every call must be done by; starts the clock. */
  deadline(): number;
  /** Milliseconds left (the whole budget before the first call); never negative. */
  left(): number;
  /** The least a call must have left to start; one with less is recorded `budget` and sends nothing. */
  readonly minCallMs: number;
}
