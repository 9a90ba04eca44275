import { Agent, type Dispatcher, request } from 'undici';
import type { DecideOptions, Decider, DecisionReply, HealthReport } from '../ports/decider.js';
import { DECIDE_PATH, decodeResponse, encodeRequest } from '../protocol/codec.js';
import type { DeciderEntry } from '../protocol/entry.js';
import { DecisionFailure, failureForStatus } from '../protocol/failure.js';
import type { DecisionRequest } from '../protocol/questions.js';
import { CallDeadline } from './deadline.js';

export interface HttpDeciderOptions {
  /** The entry (its `url` is the display form, recorded with every decision). */
  entry: DeciderEntry;
  /** The base URL to call; defaults to the entry's. */
  url?: string;
  /** CHALK_DECIDER_TOKEN: goes in the Authorization header and nowhere else. */
  token?: string;
  /** Why the address must be sent nothing (the trust rule), or null. Checked on every call. */
  untrusted?: () => string | null;
  dispatcher?: Dispatcher;
}

function errorCode(err: unknown): string {
  let e = err as { code?: string; cause?: unknown } | undefined;
  for (let i = 0; e && i < 5; i++) {
    if (typeof e.code === 'string') return e.code;
    e = e.cause as typeof e;
  }
  return 'unknown';
}

/**
 * Why a request over undici got no answer, by name: the caller cancelled, its time ran
 * out, or the address could not be reached (the code, never the message, which may
 * carry the URL). Shared by every HTTP client of the host services (decider, embeddings).
 */
export function classifyTransportError(err: unknown, timedOut: boolean, caller?: AbortSignal): DecisionFailure {
  if (caller?.aborted) return new DecisionFailure('cancelled', 'cancelled by the caller', { retryable: false });
  if (timedOut) return new DecisionFailure('timeout', 'no full answer within the time left', { retryable: false });
  const code = errorCode(err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    // No retry changes DNS.
    return new DecisionFailure('unreachable', `could not be reached: the host name does not resolve (${code})`, {
      retryable: false,
    });
  }
  return new DecisionFailure('unreachable', `could not be reached (${code})`);
}

/**
 * Decider protocol v1 over undici: `POST <url>/v1/systemone`, one round trip,
 * every outcome classified. The token is only ever an Authorization header; no
 * message carries it or the state.
 */
export class HttpDecider implements Decider {
  readonly name: string = 'http';
  readonly entry: DeciderEntry;
  private readonly base: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  readonly #token: string;
  readonly #untrusted: () => string | null;
  private readonly decideUrl: string;
  /** Built once; they carry the token, so they stay private and are only ever handed to undici. */
  private readonly postHeaders: Readonly<Record<string, string>>;

  constructor(opts: HttpDeciderOptions) {
    this.entry = opts.entry;
    this.base = (opts.url ?? opts.entry.url).replace(/\/+$/, '');
    this.#token = opts.token ?? '';
    this.#untrusted = opts.untrusted ?? (() => null);
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, pipelining: 1 });
    this.decideUrl = `${this.base}${DECIDE_PATH}`;
    this.postHeaders = this.headers(true);
  }

  unavailable(): string | null {
    return this.#untrusted();
  }

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (json) h['content-type'] = 'application/json';
    if (this.#token !== '') h.authorization = `Bearer ${this.#token}`;
    return h;
  }

  async decide(req: DecisionRequest, opts: DecideOptions = {}): Promise<DecisionReply> {
    const refused = this.#untrusted();
    if (refused) return { ok: false, failure: new DecisionFailure('untrusted', refused, { retryable: false }) };
    if (opts.signal?.aborted) {
      return {
        ok: false,
        failure: new DecisionFailure('cancelled', 'cancelled before it was sent', { retryable: false }),
      };
    }
    const left = opts.deadline === undefined ? 60_000 : opts.deadline - Date.now();
    if (left <= 0) {
      return {
        ok: false,
        failure: new DecisionFailure('budget', 'no time was left to send the call', { retryable: false }),
      };
    }
    const signal = new CallDeadline(Date.now() + left, opts.signal);
    try {
      const res = await request(this.decideUrl, {
        method: 'POST',
        headers: this.postHeaders,
        body: encodeRequest(req),
        signal,
        dispatcher: this.dispatcher,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) {
        const ra = Number(res.headers['retry-after']);
        return { ok: false, failure: failureForStatus(res.statusCode, Number.isFinite(ra) ? ra * 1000 : undefined) };
      }
      try {
        return { ok: true, response: decodeResponse(text, req) };
      } catch (err) {
        if (err instanceof DecisionFailure) return { ok: false, failure: err };
        throw err;
      }
    } catch (err) {
      return { ok: false, failure: this.classify(err, signal.timedOut(), opts.signal) };
    } finally {
      signal.done();
    }
  }

  private classify(err: unknown, timedOut: boolean, caller?: AbortSignal): DecisionFailure {
    return classifyTransportError(err, timedOut, caller);
  }

  /**
   * Health per the protocol page: `GET /health`; when it answers 404 or 405,
   * the smallest real request instead. Nothing is sent to an untrusted address.
   */
  async health(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<HealthReport> {
    const refused = this.#untrusted();
    if (refused) return { healthy: false, status: 'untrusted', via: 'none', detail: refused };
    const timeoutMs = opts.timeoutMs ?? 2_000;
    const got = await getHealth({
      base: this.base,
      headers: this.headers(false),
      dispatcher: this.dispatcher,
      timeoutMs,
      signal: opts.signal,
    });
    if ('healthy' in got) return got;
    const { status, text } = got;
    if (status === 404 || status === 405) {
      const probe = await this.decide(
        {
          state: 'Chalk health check.',
          questions: { health: { type: 'noul', instructions: 'Is this text a health check?' } },
        },
        { deadline: Date.now() + timeoutMs, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
      return probe.ok
        ? { healthy: true, status: 'ok', via: 'probe', model: probe.response.model }
        : { healthy: false, status: probe.failure.kind, via: 'probe', detail: probe.failure.message };
    }
    if (status !== 200) return { healthy: false, status: `HTTP ${status}`, via: 'health' };
    let body: { status?: unknown; model?: unknown; protocol?: unknown; revision?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return { healthy: false, status: 'invalid', via: 'health', detail: '/health answered a body that is not JSON' };
    }
    if (body.protocol !== undefined && body.protocol !== 1) {
      return {
        healthy: false,
        status: 'version',
        via: 'health',
        detail: `the decider speaks protocol ${JSON.stringify(body.protocol)}, Chalk speaks 1`,
      };
    }
    return {
      healthy: true,
      status: typeof body.status === 'string' ? body.status : 'ok',
      via: 'health',
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
      ...(typeof body.revision === 'string' ? { revision: body.revision } : {}),
    };
  }

  private closed = false;

  /** Closes the connections this client opened (idempotent). */
  async close(): Promise<void> {
    if (this.closed || !this.ownsDispatcher) return;
    this.closed = true;
    await this.dispatcher.close();
  }
}

/**
 * `GET <base>/health` with `timeoutMs` of its own, for every client of a host service (the
 * decider, the embedding service): the answer's status and body, or, when nothing came back,
 * the health report naming the transport failure. Each client reads the body its own way.
 */
export async function getHealth(o: {
  base: string;
  headers?: Record<string, string>;
  dispatcher: Dispatcher;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<{ status: number; text: string } | HealthReport> {
  const signal = new CallDeadline(Date.now() + o.timeoutMs, o.signal);
  try {
    const res = await request(`${o.base}/health`, {
      method: 'GET',
      ...(o.headers ? { headers: o.headers } : {}),
      signal,
      dispatcher: o.dispatcher,
    });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (err) {
    const f = classifyTransportError(err, signal.timedOut(), o.signal);
    return { healthy: false, status: f.kind, via: 'health', detail: f.message };
  } finally {
    signal.done();
  }
}
