import { describe, expect, it } from 'vitest';
import { Admission } from '../../core/decision/admission.js';
import type { DecisionRecord } from '../../core/decision/record.js';
import { DecisionRuntime } from '../../core/decision/runtime.js';
import { estimateTokens } from '../../core/decision/tokens.js';
import type { DecisionClient, DecisionReply } from '../../core/ports/decider.js';
import { encodeRequest } from '../../core/protocol/codec.js';
import type { AdmissionLimit, DeciderEntry } from '../../core/protocol/entry.js';
import { parseLimit } from '../../core/protocol/entry.js';
import { DecisionFailure, failureForStatus } from '../../core/protocol/failure.js';
import { decisionRequest, noul } from '../../core/protocol/questions.js';

const entry = (limit: AdmissionLimit = { kind: 'concurrency', maxConcurrent: 1 }, max = 4096): DeciderEntry => ({
  id: 'test-decider',
  url: 'http://127.0.0.1:1',
  maxContextTokens: max,
  limit,
});
const req = (state = 'the loop failed twice on the same assertion') =>
  decisionRequest(state, { stuck: noul('Is the agent stuck on the same root cause?') });
const answered = (p = 0.9, model = 'fake-model'): DecisionReply => ({
  ok: true,
  response: { protocol: 1, model, answers: { stuck: { type: 'noul', noul: p } }, inputTokens: null },
});
const failed = (f: DecisionFailure): DecisionReply => ({ ok: false, failure: f });

/** A scripted client: replies in order (the last repeats); records when each round trip came. */
function scripted(...replies: Array<DecisionReply | (() => Promise<DecisionReply>)>) {
  const at: number[] = [];
  const client: DecisionClient & { at: number[] } = {
    at,
    async decide() {
      at.push(performance.now());
      const r = replies[Math.min(at.length - 1, replies.length - 1)];
      return typeof r === 'function' ? r() : (r as DecisionReply);
    },
  };
  return client;
}

function runtime(client: DecisionClient, e = entry()) {
  const records: DecisionRecord[] = [];
  const rt = new DecisionRuntime(e, client);
  rt.observe({ write: (r) => void records.push(r) });
  return { rt, records };
}

describe('DecisionCall', () => {
  it('refuses to capture requirements before its request is set', () => {
    const { rt } = runtime(scripted(answered()));
    const call = rt.call();
    expect(() => call.requirements()).toThrow(/needs its request before its requirements are captured/);
    call.setRequest(req());
    expect(call.requirements().outputTokens).toBe(0);
  });

  it('reserves the wire body counted by the estimate: a permit on a gate, tokens on a window', () => {
    const r = req();
    const tokens = estimateTokens(encodeRequest(r));
    expect(tokens).toBe(Math.ceil(Buffer.byteLength(encodeRequest(r)) / 4));
    const gate = runtime(scripted(answered())).rt.call(r).requirements();
    expect(gate).toEqual({
      entry: 'test-decider',
      inputTokens: tokens,
      outputTokens: 0,
      demand: { kind: 'permit', count: 1 },
    });
    const window = runtime(scripted(answered()), entry({ kind: 'window', tokensPerMinute: 60_000, burst: 1000 }))
      .rt.call(r)
      .requirements();
    expect(window.demand).toEqual({ kind: 'tokens', count: tokens });
  });

  it('fails a request over the context ceiling before the wire, naming both counts', async () => {
    const client = scripted(answered());
    const { rt, records } = runtime(client, entry(undefined, 20));
    const r = req('x'.repeat(400));
    const n = estimateTokens(encodeRequest(r));
    const d = await rt.decide(r);
    expect(d.failure?.kind).toBe('too_large');
    expect(d.failure?.message).toContain(`${n} tokens`);
    expect(d.failure?.message).toContain('(20)');
    expect(client.at).toHaveLength(0);
    expect(records).toHaveLength(1);
    expect(records[0]?.attempts).toBe(0);
  });

  it('answers, and leaves one record with answers, tokens, latency and model', async () => {
    const { rt, records } = runtime(scripted(answered(0.9, 'strands-x')));
    const d = await rt.decide(req(), { tags: { kind: 'stuck', run_id: 'r1' } });
    expect(d.noul('stuck')).toMatchObject({ answer: 'yes', confidence: 0.9 });
    expect(records).toHaveLength(1);
    const rec = records[0] as DecisionRecord;
    expect(rec.model).toBe('strands-x');
    expect(rec.answers).toEqual({ stuck: { type: 'noul', noul: 0.9 } });
    expect(rec.failure).toBeNull();
    expect(rec.inputTokens).toBe(estimateTokens(encodeRequest(req())));
    expect(rec.latencyMs).toBeGreaterThanOrEqual(0);
    expect(rec.tags).toEqual({ kind: 'stuck', run_id: 'r1' });
    expect(rec.questions).toEqual([{ id: 'stuck', type: 'noul' }]);
    expect(JSON.stringify(rec)).not.toContain('same assertion');
  });

  it('records a failed call with its reason, and every sink reads the same record', async () => {
    const { rt, records } = runtime(scripted(failed(failureForStatus(422))));
    const second: DecisionRecord[] = [];
    rt.observe({ write: (r) => void second.push(r) });
    rt.observe({
      write: () => {
        throw new Error('a broken sink');
      },
    });
    const d = await rt.decide(req(), { retries: 3 });
    expect(d.ok).toBe(false);
    expect(d.failure?.kind).toBe('rejected');
    expect(records).toHaveLength(1);
    expect(records[0]?.failure).toEqual({ kind: 'rejected', message: 'HTTP 422' });
    expect(records[0]?.answers).toBeNull();
    expect(records[0]?.model).toBeNull();
    expect(second).toEqual(records);
  });

  it('re-runs 5xx and unreachable within the budget, with a growing random backoff', async () => {
    const client = scripted(
      failed(failureForStatus(503)),
      failed(new DecisionFailure('unreachable', 'could not be reached (ECONNREFUSED)')),
      failed(failureForStatus(500)),
      answered(),
    );
    const { rt, records } = runtime(client);
    const d = await rt.decide(req(), { retries: 3, backoffMs: 20, random: () => 0.999 });
    expect(d.ok).toBe(true);
    expect(client.at).toHaveLength(4);
    const gaps = client.at.slice(1).map((t, i) => t - (client.at[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(18);
    expect(gaps[1]).toBeGreaterThanOrEqual(38);
    expect(gaps[2]).toBeGreaterThanOrEqual(78);
    expect(records).toHaveLength(1);
    expect(records[0]?.attempts).toBe(4);
  });

  it('refuses past the retry budget, naming it', async () => {
    const client = scripted(failed(failureForStatus(503)));
    const { rt, records } = runtime(client);
    const d = await rt.decide(req(), { retries: 2, backoffMs: 1 });
    expect(client.at).toHaveLength(3);
    expect(d.failure?.kind).toBe('server');
    expect(d.failure?.message).toMatch(/retry budget \(2\) spent after 3 attempts; last: HTTP 503/);
    expect(records[0]?.failure?.message).toMatch(/retry budget \(2\)/);
  });

  it('never retries with a budget of 0 (the loop questions)', async () => {
    const client = scripted(failed(failureForStatus(429, 10)));
    const d = await runtime(client).rt.decide(req(), { retries: 0 });
    expect(client.at).toHaveLength(1);
    expect(d.failure?.message).toMatch(/retry budget \(0\)/);
  });

  it('paces a 429 at least its Retry-After', async () => {
    const client = scripted(failed(failureForStatus(429, 120)), answered());
    const d = await runtime(client).rt.decide(req(), { retries: 1, backoffMs: 1 });
    expect(d.ok).toBe(true);
    expect((client.at[1] as number) - (client.at[0] as number)).toBeGreaterThanOrEqual(115);
  });

  it.each([
    ['another 4xx', failureForStatus(400)],
    ['auth', failureForStatus(401)],
    ['an invalid body', new DecisionFailure('invalid', 'the body is not JSON')],
    ['a version mismatch', new DecisionFailure('version', 'the decider speaks protocol 2, Chalk speaks 1')],
    ['a timeout', new DecisionFailure('timeout', 'no full answer within the time left', { retryable: false })],
  ])('surfaces %s at once', async (_what, f) => {
    const client = scripted(failed(f));
    const d = await runtime(client).rt.decide(req(), { retries: 3, backoffMs: 1 });
    expect(client.at).toHaveLength(1);
    expect(d.failure?.kind).toBe(f.kind);
  });

  it('sends nothing when its deadline has passed (budget), and records it', async () => {
    const client = scripted(answered());
    const { rt, records } = runtime(client);
    const d = await rt.decide(req(), { deadline: Date.now() - 1 });
    expect(d.failure?.kind).toBe('budget');
    expect(client.at).toHaveLength(0);
    expect(records[0]?.failure?.kind).toBe('budget');
  });

  it('leaves a record when the client itself throws', async () => {
    const client: DecisionClient = {
      decide: async () => {
        throw new Error('bug');
      },
    };
    const { rt, records } = runtime(client);
    const d = await rt.decide(req());
    expect(d.failure?.message).toMatch(/client failed: bug/);
    expect(records).toHaveLength(1);
  });

  it('runs once', async () => {
    const call = runtime(scripted(answered())).rt.call(req());
    await call.run();
    await expect(call.run()).rejects.toThrow(/runs once/);
  });
});

describe('admission', () => {
  const defer = () => {
    let resolve!: () => void;
    const p = new Promise<void>((r) => {
      resolve = r;
    });
    return { p, resolve };
  };

  it('grants a concurrency gate first come, first served, returning permits when calls end', async () => {
    const a = new Admission({ kind: 'concurrency', maxConcurrent: 2 });
    const order: number[] = [];
    const gates = Array.from({ length: 6 }, () => defer());
    const all = gates.map(async (g, i) => {
      const grant = await a.acquire(1);
      order.push(i);
      await g.p;
      grant.release();
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual([0, 1]);
    expect(a.waiting).toBe(4);
    gates[1]?.resolve();
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual([0, 1, 2]);
    for (const g of gates) g.resolve();
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(a.peak).toBe(2);
  });

  it('lets a waiting call leave holding nothing', async () => {
    const a = new Admission({ kind: 'concurrency', maxConcurrent: 1 });
    const first = await a.acquire(1);
    const ac = new AbortController();
    const leaving = a.acquire(1, { signal: ac.signal });
    const third = a.acquire(1);
    ac.abort();
    await expect(leaving).rejects.toMatchObject({ kind: 'cancelled' });
    first.release();
    await third; // the permit went to the next in line, not to the one that left
    expect(a.inFlight).toBe(1);
    const busy = a.acquire(1, { maxWaitMs: 20 });
    await expect(busy).rejects.toMatchObject({ kind: 'busy' });
    const late = a.acquire(1, { deadline: Date.now() + 20 });
    await expect(late).rejects.toMatchObject({ kind: 'budget' });
    expect(a.waiting).toBe(0);
  });

  it('grants a window all-or-nothing, in order: a small demand never passes a large head', async () => {
    let now = 0;
    const a = new Admission({ kind: 'window', tokensPerMinute: 60_000, burst: 100 }, () => now);
    const order: string[] = [];
    await a.acquire(80);
    const big = a.acquire(90).then(() => order.push('big'));
    const small = a.acquire(5).then(() => order.push('small'));
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual([]);
    now = 200; // the bucket is full again (100): the head takes 90, then the small one 5
    await Promise.all([big, small]);
    expect(order).toEqual(['big', 'small']);
  });

  it('refuses a reservation over what the window can ever hold', async () => {
    const a = new Admission({ kind: 'window', tokensPerMinute: 60_000, burst: 100 });
    await expect(a.acquire(101)).rejects.toMatchObject({ kind: 'too_large' });
  });

  it('parses declared limits', () => {
    expect(parseLimit('max_concurrent=4')).toEqual({ kind: 'concurrency', maxConcurrent: 4 });
    expect(parseLimit('tpm=15000')).toEqual({ kind: 'window', tokensPerMinute: 15000, burst: 15000 });
    expect(parseLimit('tpm=15000, burst=500')).toEqual({ kind: 'window', tokensPerMinute: 15000, burst: 500 });
    expect(() => parseLimit('max_concurrent=0')).toThrow(/positive whole number/);
    expect(() => parseLimit('max_concurrent=2,tpm=5')).toThrow(/either/);
    expect(() => parseLimit('four')).toThrow(/look like/);
  });
});

describe("a loop's call under its budget", () => {
  it('does not start with under minStartMs left: recorded `budget`, nothing sent', async () => {
    const client = scripted(answered());
    const { rt, records } = runtime(client);
    const d = await rt.decide(req(), {
      deadline: Date.now() + 30,
      minStartMs: 50,
      retries: 0,
      tags: { kind: 'stuck' },
    });
    expect(d.failure?.kind).toBe('budget');
    expect(client.at).toHaveLength(0);
    expect(records.map((r) => [r.failure?.kind, r.attempts])).toEqual([['budget', 0]]);
  });

  it('annotates its one record from the outcome, and still writes it when the annotation throws', async () => {
    const { rt, records } = runtime(scripted(answered(0.97)));
    await rt.decide(req(), { tags: { kind: 'stuck' }, annotate: (d) => ({ acted: String(d.ok) }) });
    await rt.decide(req(), {
      annotate: () => {
        throw new Error('caller bug');
      },
    });
    expect(records.map((r) => r.tags)).toEqual([{ kind: 'stuck', acted: 'true' }, {}]);
  });
});
