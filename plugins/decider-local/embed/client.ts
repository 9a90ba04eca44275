import { Agent, type Dispatcher, request } from 'undici';
import {
  CallDeadline,
  classifyTransportError,
  DecisionFailure,
  failureForStatus,
  getHealth,
} from '../../../core/decider.js';
import type { Embedder, HealthReport } from '../../../core/plugin.js';
import {
  EMBED_DIMENSIONS,
  EMBED_PATH,
  EmbeddingRefused,
  encodeEmbedRequest,
  MAX_INPUTS,
  readEmbeddings,
} from './wire.js';

export interface EmbedClientOptions {
  /** CHALK_EMBED_URL. */
  url: string;
  /** Why the address must be sent nothing (the trust rule), or null. Checked on every call. */
  untrusted?: () => string | null;
  /** Called before every request (the local service's idle clock). */
  onUse?: () => void;
  dispatcher?: Dispatcher;
}

export interface EmbedOptions {
  signal?: AbortSignal;
  /** Absolute time (ms since the epoch) the answer must be complete by; default 30 s from now. */
  deadline?: number;
}

/**
 * The Embedder port over HTTP: OpenAI-compatible `POST <url>/v1/embeddings` `{input, model}`
 * answered by `data[].embedding`, 384 dimensions of unit length, one per input. Anything else,
 * and every failure to answer, is a DecisionFailure by name (the same vocabulary as the
 * decider's: `unreachable`, `timeout`, `server`, `rejected`, `invalid`, `untrusted`...).
 */
export class EmbedClient implements Embedder {
  readonly dimensions = EMBED_DIMENSIONS;
  private readonly base: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly untrusted: () => string | null;
  private readonly onUse: (() => void) | undefined;

  constructor(opts: EmbedClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.untrusted = opts.untrusted ?? (() => null);
    this.onUse = opts.onUse;
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, pipelining: 1 });
  }

  async embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (texts.length > MAX_INPUTS) {
      throw new DecisionFailure('too_large', `${texts.length} inputs in one request, at most ${MAX_INPUTS}`, {
        retryable: false,
      });
    }
    const refused = this.untrusted();
    if (refused) throw new DecisionFailure('untrusted', refused, { retryable: false });
    if (opts.signal?.aborted)
      throw new DecisionFailure('cancelled', 'cancelled before it was sent', { retryable: false });
    const deadline = opts.deadline ?? Date.now() + 30_000;
    if (deadline - Date.now() <= 0) {
      throw new DecisionFailure('budget', 'no time was left to send the call', { retryable: false });
    }
    this.onUse?.();
    const signal = new CallDeadline(deadline, opts.signal);
    let status: number;
    let text: string;
    try {
      const res = await request(`${this.base}${EMBED_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: encodeEmbedRequest(texts),
        signal,
        dispatcher: this.dispatcher,
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw classifyTransportError(err, signal.timedOut(), opts.signal);
    } finally {
      signal.done();
    }
    if (status !== 200) throw failureForStatus(status);
    try {
      return readEmbeddings(text, texts.length);
    } catch (err) {
      if (err instanceof EmbeddingRefused) throw new DecisionFailure('invalid', err.message);
      throw err;
    }
  }

  /** `GET /health`; on 404 or 405 one embedding of a fixed text, with 2 seconds of its own. Never during a loop. */
  async health(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<HealthReport> {
    const refused = this.untrusted();
    if (refused) return { healthy: false, status: 'untrusted', via: 'none', detail: refused };
    const timeoutMs = opts.timeoutMs ?? 2_000;
    const got = await getHealth({ base: this.base, dispatcher: this.dispatcher, timeoutMs, signal: opts.signal });
    if ('healthy' in got) return got;
    const { status, text } = got;
    if (status === 404 || status === 405) {
      try {
        await this.embed(['health'], {
          deadline: Date.now() + timeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        return { healthy: true, status: 'ok', via: 'probe' };
      } catch (err) {
        const f = err as DecisionFailure;
        return { healthy: false, status: f.kind ?? 'invalid', via: 'probe', detail: f.message };
      }
    }
    if (status !== 200) return { healthy: false, status: `HTTP ${status}`, via: 'health' };
    let body: { status?: unknown; model?: unknown; revision?: unknown; dimensions?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return { healthy: false, status: 'invalid', via: 'health', detail: '/health answered a body that is not JSON' };
    }
    if (body.dimensions !== undefined && body.dimensions !== EMBED_DIMENSIONS) {
      return {
        healthy: false,
        status: 'invalid',
        via: 'health',
        detail: `the service embeds in ${String(body.dimensions)} dimensions, and Chalk needs ${EMBED_DIMENSIONS}`,
      };
    }
    const model =
      typeof body.model === 'string'
        ? `${body.model}${typeof body.revision === 'string' ? `@${body.revision.slice(0, 7)}` : ''}`
        : undefined;
    const ok = body.status === undefined || body.status === 'ok';
    return {
      healthy: ok,
      status: typeof body.status === 'string' ? body.status : 'ok',
      via: 'health',
      ...(model ? { model } : {}),
    };
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed || !this.ownsDispatcher) return;
    this.closed = true;
    await this.dispatcher.close();
  }
}
