/**
 * Why a decision call answered nothing. Every failure is classified, so the
 * caller (and the record) can tell a decider that is down from one that
 * refused, and the call can tell what a retry may help.
 *
 * Wire outcomes (the client's):
 * - `unreachable`  could not connect, or the connection broke before an answer
 * - `starting`     could not connect to a local service that is still loading its model (a local provider's word)
 * - `timeout`      no full answer within the call's deadline
 * - `auth`         401 or 403
 * - `rejected`     another 4xx (422: the request broke the server's schema); 429 is `rejected` too, but retryable
 * - `server`       5xx
 * - `invalid`      a 200 whose body is not an answer (unreadable JSON, no `answers`, a wrong answer)
 * - `version`      a response carrying a protocol version other than 1
 *
 * Admission outcomes (decided before anything is sent):
 * - `budget`       the call's deadline had passed before it could be sent
 * - `busy`         the call's turn did not come within the time it could wait
 * - `too_large`    the request is over the entry's context ceiling, or over what its quota window can ever grant
 * - `untrusted`    the decider's address is not on this machine and was never trusted (`chalk decider trust URL`)
 * - `cancelled`    the caller's signal aborted the call
 */
export type FailureKind =
  | 'unreachable'
  | 'starting'
  | 'timeout'
  | 'auth'
  | 'rejected'
  | 'server'
  | 'invalid'
  | 'version'
  | 'budget'
  | 'busy'
  | 'too_large'
  | 'untrusted'
  | 'cancelled';

export const FAILURE_KINDS: readonly FailureKind[] = [
  'unreachable',
  'starting',
  'timeout',
  'auth',
  'rejected',
  'server',
  'invalid',
  'version',
  'budget',
  'busy',
  'too_large',
  'untrusted',
  'cancelled',
];

export interface FailureDetail {
  /** The HTTP status, when there was one. */
  status?: number;
  /** A 429's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  /** Whether pacing and re-running may help (429, 5xx, unreachable). */
  retryable?: boolean;
  /** How many round trips the call made before it gave up. */
  attempts?: number;
}

/**
 * A classified failure. Its message never quotes the state or a credential:
 * it says what happened in words a log line can carry.
 */
export class DecisionFailure extends Error {
  override name = 'DecisionFailure';
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly retryable: boolean;
  attempts: number;

  constructor(
    readonly kind: FailureKind,
    message: string,
    detail: FailureDetail = {},
  ) {
    super(message);
    this.status = detail.status;
    this.retryAfterMs = detail.retryAfterMs;
    this.retryable = detail.retryable ?? (kind === 'unreachable' || kind === 'server');
    this.attempts = detail.attempts ?? 1;
  }

  /** `kind: message`, the one line a record or a log carries. */
  describe(): string {
    return `${this.kind}: ${this.message}`;
  }
}

/** Classifies an HTTP status that is not 200. */
export function failureForStatus(status: number, retryAfterMs?: number): DecisionFailure {
  if (status === 401 || status === 403)
    return new DecisionFailure('auth', `HTTP ${status}: the decider refused the token`, { status });
  if (status === 429) {
    return new DecisionFailure('rejected', `HTTP 429: the decider asked to slow down`, {
      status,
      retryable: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  if (status >= 500) return new DecisionFailure('server', `HTTP ${status}`, { status });
  if (status >= 400) return new DecisionFailure('rejected', `HTTP ${status}`, { status });
  return new DecisionFailure('invalid', `HTTP ${status} is not an answer`, { status });
}
