import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpDecider } from '../../core/decider-client/client.js';
import type { DecisionRecord } from '../../core/decision/record.js';
import { DecisionRuntime } from '../../core/decision/runtime.js';
import { isLocalUrl, readTrusted, trust, untrust, untrustedReason } from '../../core/decision/trust.js';
import type { DeciderEntry } from '../../core/protocol/entry.js';
import { choice, decisionRequest, noul } from '../../core/protocol/questions.js';
import { answerAll, FakeDecider, type Script } from '../fakes/decider-server.js';

const TOKEN = 'TOKEN-CANARY-91c2';
const STATE = 'STATE-CANARY-55e1: FAILED tests/test_app.py::test_marker';
const request = () =>
  decisionRequest(STATE, {
    stuck: noul('Is the agent stuck on the same root cause?'),
    kind: choice('Which kind of failure?', { assertion: 'a test asserts', crash: 'the program crashes' }),
  });
const entry = (url: string): DeciderEntry => ({
  id: 'decider',
  url,
  maxContextTokens: 4096,
  limit: { kind: 'concurrency', maxConcurrent: 4 },
});

const fakes: FakeDecider[] = [];
const clients: HttpDecider[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const f of fakes.splice(0)) await f.stop();
});

async function fake(opts: ConstructorParameters<typeof FakeDecider>[0] = {}) {
  const f = await new FakeDecider(opts).start();
  fakes.push(f);
  return f;
}
function client(url: string, opts: Partial<ConstructorParameters<typeof HttpDecider>[0]> = {}) {
  const c = new HttpDecider({ entry: entry(url), ...opts });
  clients.push(c);
  return c;
}
const decide = (c: HttpDecider, deadlineMs = 5_000) => c.decide(request(), { deadline: Date.now() + deadlineMs });
const script = (s: Script) => s;

describe('HttpDecider', () => {
  it('speaks v1 to /v1/systemone with the bearer token, and reads the answer', async () => {
    const f = await fake({ token: TOKEN, model: 'strands-decider-2B-v19' });
    const r = await decide(client(f.url, { token: TOKEN }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.response.model).toBe('strands-decider-2B-v19');
    expect(r.response.answers.stuck).toEqual({ type: 'noul', noul: 0.9 });
    expect(f.requests[0]?.state).toBe(STATE);
    expect(f.requests[0]?.protocol).toBe(1);
    expect(Object.keys(f.requests[0]?.questions ?? {})).toEqual(['stuck', 'kind']);
    expect(f.authHeaders).toEqual([`Bearer ${TOKEN}`]);
    expect(f.violations).toEqual([]);
  });

  it('sends no Authorization header without a token', async () => {
    const f = await fake();
    await decide(client(f.url));
    expect(f.authHeaders).toEqual([undefined]);
  });

  it.each([
    ['401', { status: 401, body: { detail: 'no' } }, 'auth', false],
    ['403', { status: 403, body: {} }, 'auth', false],
    ['422', { status: 422, body: { detail: [] } }, 'rejected', false],
    ['400', { status: 400, body: {} }, 'rejected', false],
    ['429', { status: 429, body: {}, headers: { 'retry-after': '7' } }, 'rejected', true],
    ['503', { status: 503, body: {} }, 'server', true],
    ['500', { status: 500, raw: 'Internal Server Error' }, 'server', true],
    ['an HTML 200', { status: 200, raw: '<html>hello</html>' }, 'invalid', false],
    ['a 200 without answers', { status: 200, body: { model: 'm' } }, 'invalid', false],
    ['a 200 of protocol 2', { status: 200, body: { protocol: 2, model: 'm', answers: {} } }, 'version', false],
    ['a dropped connection', { hangUp: true }, 'unreachable', true],
  ])('classifies %s', async (_what, reply, kind, retryable) => {
    const f = await fake({ script: script(() => reply) });
    const r = await decide(client(f.url, { token: TOKEN }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.kind).toBe(kind);
    expect(r.failure.retryable).toBe(retryable);
    if (_what === '429') expect(r.failure.retryAfterMs).toBe(7000);
    expect(r.failure.message).not.toContain(TOKEN);
    expect(r.failure.message).not.toContain('STATE-CANARY');
  });

  it('is unreachable on a port nobody listens on', async () => {
    const f = await fake();
    const url = f.url;
    await f.stop();
    const r = await decide(client(url));
    expect(r.ok ? null : r.failure.kind).toBe('unreachable');
    expect(r.ok ? null : r.failure.retryable).toBe(true);
  });

  it('ends a call the server never answers at its deadline', async () => {
    const f = await fake({ script: () => ({ silent: true }) });
    const t0 = Date.now();
    const r = await decide(client(f.url), 150);
    expect(r.ok ? null : r.failure.kind).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('ends a call when the caller cancels it, whether sent or not', async () => {
    const f = await fake({ script: () => ({ silent: true }) });
    const c = client(f.url);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await c.decide(request(), { signal: ac.signal, deadline: Date.now() + 10_000 });
    expect(r.ok ? null : r.failure.kind).toBe('cancelled');
    const again = await c.decide(request(), { signal: ac.signal, deadline: Date.now() + 10_000 });
    expect(again.ok ? null : again.failure.kind).toBe('cancelled');
    expect(f.requests).toHaveLength(1);
  });

  it('checks health with /health, else with the smallest real request', async () => {
    const healthy = await fake({ health: { status: 200, body: { status: 'ok', model: 'strands-x', device: 'cpu' } } });
    expect(await client(healthy.url).health()).toEqual({
      healthy: true,
      status: 'ok',
      via: 'health',
      model: 'strands-x',
    });
    expect(healthy.requests).toHaveLength(0);
    const noHealth = await fake({ model: 'probe-model' });
    expect(await client(noHealth.url).health()).toMatchObject({ healthy: true, via: 'probe', model: 'probe-model' });
    expect(noHealth.requests[0]?.questions).toEqual({
      health: { type: 'noul', instructions: 'Is this text a health check?' },
    });
    const loading = await fake({ health: { status: 503, body: {} } });
    expect(await client(loading.url).health()).toMatchObject({ healthy: false, status: 'HTTP 503' });
    expect(loading.requests).toHaveLength(0);
  });
});

describe('the trust rule', () => {
  it('knows which hosts are on this machine', () => {
    for (const u of ['http://127.0.0.1:8471', 'http://127.9.8.7', 'http://localhost:1', 'http://[::1]:8471']) {
      expect(isLocalUrl(u)).toBe(true);
    }
    for (const u of [
      'https://decider.example.com',
      'http://128.0.0.1',
      'http://10.0.0.2',
      'http://localhost.evil.com',
    ]) {
      expect(isLocalUrl(u)).toBe(false);
    }
  });

  it('sends an untrusted address nothing, not even a health check, until it is trusted', async () => {
    const env = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'chalk-trust-')) };
    const f = await fake({ health: { status: 200, body: { status: 'ok' } } });
    // A name that is not local, routed to the fake: the rule must hold by name, before any connection.
    const url = `http://decider.example.test:${f.port}`;
    const dispatcher = new Agent({
      connect: {
        lookup: (_h: string, o: { all?: boolean }, cb: (...a: unknown[]) => void) =>
          o.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4),
      } as never,
    });
    const c = client(url, {
      token: TOKEN,
      dispatcher,
      untrusted: () => untrustedReason(url, 'CHALK_DECIDER_URL', env),
    });
    const records: DecisionRecord[] = [];
    const rt = new DecisionRuntime(c.entry, c);
    rt.observe({ write: (r) => void records.push(r) });

    const refused = await rt.decide(request(), { retries: 3 });
    expect(refused.failure?.kind).toBe('untrusted');
    expect(refused.failure?.message).toContain('chalk decider trust http://decider.example.test');
    expect(refused.failure?.message).not.toContain(TOKEN);
    expect(await c.health()).toMatchObject({ healthy: false, status: 'untrusted' });
    expect(f.requests).toHaveLength(0);
    expect(f.healthCalls).toBe(0);
    expect(records[0]?.failure?.kind).toBe('untrusted');

    expect(trust(`${url}/`, env)).toBe(true);
    expect(readTrusted(env)).toEqual([url]);
    const answered = await rt.decide(request());
    expect(answered.noul('stuck').answer).toBe('yes');
    expect(f.requests).toHaveLength(1);

    expect(untrust(url, env)).toBe(true);
    expect((await rt.decide(request())).failure?.kind).toBe('untrusted');
    expect(f.requests).toHaveLength(1);
    await dispatcher.close();
  });

  it('leaves answerAll honest: it answers every type asked', () => {
    const a = answerAll({ protocol: 1, state: 's', questions: request().questions as never });
    expect(Object.keys(a.answers)).toEqual(['stuck', 'kind']);
  });
});
