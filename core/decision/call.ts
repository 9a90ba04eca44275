import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DecideOptions, DecisionClient } from '../ports/decider.js';
import { encodeRequest } from '../protocol/codec.js';
import type { DeciderEntry } from '../protocol/entry.js';
import { DecisionFailure } from '../protocol/failure.js';
import type { DecisionRequest } from '../protocol/questions.js';
import type { Admission } from './admission.js';
import { Decision } from './reading.js';
import type { DecisionRecord } from './record.js';
import { estimateTokens } from './tokens.js';

/** The record's list of questions asked, built once per request (requests are not changed after they are built). */
const asked = new WeakMap<DecisionRequest, DecisionRecord['questions']>();
function askedList(request: DecisionRequest): DecisionRecord['questions'] {
  let list = asked.get(request);
  if (!list) {
    list = Object.entries(request.questions).map(([id, q]) => ({ id, type: q.type }));
    asked.set(request, list);
  }
  // A copy per record: a sink may keep or change its record.
  return list.map((q) => ({ id: q.id, type: q.type }));
}

/** ISO 8601 of a time in ms, formatting a Date only once per second (the record's `at`, on every call). */
let isoSecond = Number.NaN;
let isoPrefix = '';
function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const rest = ms - second * 1000;
  return `${isoPrefix}${rest < 10 ? '00' : rest < 100 ? '0' : ''}${rest}Z`;
}

/** Upstream retries a call gets unless told otherwise (Chalk's loop questions pass 0: never retry within a loop). */
export const DEFAULT_RETRIES = 3;
/** The budget of Chalk's loop questions: never retry within a loop. */
export const LOOP_RETRIES = 0;
/** How long a call may take when no deadline is given. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** The first backoff window; each retry doubles it, up to MAX_BACKOFF_MS. */
export const BASE_BACKOFF_MS = 200;
export const MAX_BACKOFF_MS = 5_000;

export interface CallOptions {
  signal?: AbortSignal;
  /** Absolute time (ms since the epoch) the call must be done by; default now + DEFAULT_TIMEOUT_MS. */
  deadline?: number;
  /** The upstream retry budget: re-runs after 429, 5xx or unreachable (default 3). */
  retries?: number;
  /** How long the call may wait for its admission turn (`busy` after). */
  maxWaitMs?: number;
  /** Copied onto the record. */
  tags?: Record<string, string>;
  /**
   * More tags, from the outcome, before the record is written (what the caller
   * does with the answer, e.g. `acted`), so the one record says it. Must not throw.
   */
  annotate?: (decision: Decision) => Record<string, string>;
  /**
   * The least time that must be left to the deadline for the call to start
   * (a loop's call with under 50 ms left is recorded `budget` and sends nothing).
   */
  minStartMs?: number;
  /** The first backoff window in ms (tests shorten it). */
  backoffMs?: number;
  /** A number in [0, 1) (tests fix it). */
  random?: () => number;
}

export interface Requirements {
  entry: string;
  /** The reservation: the wire body's token count (estimate), with no output. */
  inputTokens: number;
  outputTokens: 0;
  /** What admission takes: one permit, or the reservation from the quota window. */
  demand: { kind: 'permit'; count: 1 } | { kind: 'tokens'; count: number };
}

/** What a call runs on: the entry, its client, its admission line, and where its one record goes. */
export interface CallContext {
  entry: DeciderEntry;
  client: DecisionClient;
  admission: Admission;
  /** Writes the call's one record; a promise when some sink is asynchronous. */
  emit(record: DecisionRecord): Promise<void> | undefined;
}

/**
 * One decision as a priced, admitted, recorded job. The request must be set
 * before the requirements are captured, because they price it. A call runs
 * once: admission, round trips within its retry budget, then exactly one
 * record, answered or failed.
 */
export class DecisionCall {
  private request: DecisionRequest | null;
  private ran = false;

  constructor(
    private readonly ctx: CallContext,
    request?: DecisionRequest,
    private readonly opts: CallOptions = {},
  ) {
    this.request = request ?? null;
  }

  setRequest(request: DecisionRequest): this {
    if (this.ran) throw new Error('a decision call runs once; its request cannot change after it ran');
    this.request = request;
    return this;
  }

  requirements(): Requirements {
    if (!this.request) {
      throw new Error('a decision call needs its request before its requirements are captured');
    }
    const inputTokens = estimateTokens(encodeRequest(this.request));
    const limit = this.ctx.entry.limit;
    return {
      entry: this.ctx.entry.id,
      inputTokens,
      outputTokens: 0,
      demand: limit.kind === 'concurrency' ? { kind: 'permit', count: 1 } : { kind: 'tokens', count: inputTokens },
    };
  }

  /** Runs the call; never throws for a decider's failure: the Decision carries it. */
  async run(): Promise<Decision> {
    const req = this.requirements();
    const request = this.request as DecisionRequest;
    if (this.ran) throw new Error('a decision call runs once');
    this.ran = true;
    const retries = this.opts.retries ?? DEFAULT_RETRIES;
    const started = Date.now();
    const t0 = performance.now();
    const deadline = this.opts.deadline ?? started + DEFAULT_TIMEOUT_MS;
    let attempts = 0;
    let decision: Decision;
    try {
      decision = await this.attempt(request, req, deadline, retries, (n) => {
        attempts = n;
      });
    } catch (err) {
      // A client that throws is a bug in the client; the call still leaves its record.
      const failure =
        err instanceof DecisionFailure
          ? err
          : new DecisionFailure('invalid', `the decision client failed: ${(err as Error)?.message ?? String(err)}`, {
              retryable: false,
            });
      decision = new Decision(request, null, failure, performance.now() - t0);
    }
    const latencyMs = Math.round((performance.now() - t0) * 10) / 10;
    const final = new Decision(request, decision.response, decision.failure, latencyMs);
    if (final.failure) final.failure.attempts = attempts;
    let tags: Record<string, string> = this.opts.tags ? { ...this.opts.tags } : {};
    if (this.opts.annotate) {
      try {
        tags = { ...tags, ...this.opts.annotate(final) };
      } catch {
        // The record is written whatever the caller's annotation does.
      }
    }
    const written = this.ctx.emit({
      id: randomUUID(),
      at: isoTime(started),
      entry: this.ctx.entry.id,
      url: this.ctx.entry.url,
      model: final.response?.model ?? null,
      questions: askedList(request),
      answers: final.response?.answers ?? null,
      failure: final.failure ? { kind: final.failure.kind, message: final.failure.message } : null,
      inputTokens: final.response?.inputTokens ?? req.inputTokens,
      estimatedTokens: req.inputTokens,
      latencyMs,
      attempts,
      retries,
      tags,
    });
    if (written) await written;
    return final;
  }

  private async attempt(
    request: DecisionRequest,
    req: Requirements,
    deadline: number,
    retries: number,
    count: (n: number) => void,
  ): Promise<Decision> {
    const { entry, client, admission } = this.ctx;
    const signal = this.opts.signal;
    const failed = (f: DecisionFailure) => new Decision(request, null, f, 0);
    const sendOpts: DecideOptions = signal ? { deadline, signal } : { deadline };
    const minStart = this.opts.minStartMs ?? 0;
    if (minStart > 0 && deadline - Date.now() < minStart) {
      return failed(
        new DecisionFailure('budget', `less than ${minStart} ms of the time was left; nothing was sent`, {
          retryable: false,
        }),
      );
    }
    if (req.inputTokens > entry.maxContextTokens) {
      return failed(
        new DecisionFailure(
          'too_large',
          `the request is ${req.inputTokens} tokens, over the context window of ${entry.id} (${entry.maxContextTokens})`,
        ),
      );
    }
    for (let n = 1; ; n++) {
      let grant = n === 1 && !signal?.aborted && Date.now() < deadline ? admission.tryAcquire(req.demand.count) : null;
      if (!grant) {
        try {
          grant = await admission.acquire(req.demand.count, {
            deadline,
            ...(signal ? { signal } : {}),
            ...(this.opts.maxWaitMs !== undefined ? { maxWaitMs: this.opts.maxWaitMs } : {}),
          });
        } catch (err) {
          if (err instanceof DecisionFailure) return failed(err);
          throw err;
        }
      }
      count(n);
      let reply: Awaited<ReturnType<DecisionClient['decide']>>;
      try {
        reply = await client.decide(request, sendOpts);
      } finally {
        grant.release();
      }
      if (reply.ok) return new Decision(request, reply.response, null, 0);
      const f = reply.failure;
      if (!f.retryable) return failed(f);
      const detail = {
        retryable: false,
        ...(f.status !== undefined ? { status: f.status } : {}),
      };
      if (n > retries) {
        return failed(
          new DecisionFailure(
            f.kind,
            `retry budget (${retries}) spent after ${n} attempts; last: ${f.message}`,
            detail,
          ),
        );
      }
      const wait = this.backoff(n, f.retryAfterMs);
      if (Date.now() + wait >= deadline) {
        return failed(
          new DecisionFailure(
            f.kind,
            `no time left for a retry within the retry budget (${retries}); last: ${f.message}`,
            detail,
          ),
        );
      }
      try {
        await sleep(wait, undefined, signal ? { signal } : {});
      } catch {
        return failed(new DecisionFailure('cancelled', `cancelled while pacing a retry; last: ${f.message}`));
      }
    }
  }

  /** A random wait within a window that doubles with each attempt; a 429's Retry-After is a floor. */
  private backoff(attempt: number, retryAfterMs?: number): number {
    const base = this.opts.backoffMs ?? BASE_BACKOFF_MS;
    const window = Math.min(MAX_BACKOFF_MS, base * 2 ** (attempt - 1));
    const random = this.opts.random ?? Math.random;
    const wait = window / 2 + random() * (window / 2);
    return Math.max(wait, retryAfterMs ?? 0);
  }
}
