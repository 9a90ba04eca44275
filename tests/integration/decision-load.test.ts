import { afterEach, describe, expect, it } from 'vitest';
import { HttpDecider } from '../../core/decider-client/client.js';
import type { DecisionRecord } from '../../core/decision/record.js';
import { DecisionRuntime } from '../../core/decision/runtime.js';
import { estimateTokens } from '../../core/decision/tokens.js';
import { encodeRequest } from '../../core/protocol/codec.js';
import type { AdmissionLimit } from '../../core/protocol/entry.js';
import { decisionRequest, noul } from '../../core/protocol/questions.js';
import { answerAll, FakeDecider } from '../fakes/decider-server.js';

/** Bounded load: 200 decisions submitted at once against a local fake decider. */
const N = 200;
const req = (i: number) => decisionRequest(`loop ${String(i).padStart(3, '0')} failed`, { stuck: noul('Stuck?') });

let fake: FakeDecider | null = null;
let client: HttpDecider | null = null;
afterEach(async () => {
  await client?.close();
  await fake?.stop();
});

async function setup(limit: AdmissionLimit, serviceMs: number) {
  fake = await new FakeDecider({ script: (r) => ({ body: answerAll(r, 0.9), delayMs: serviceMs }) }).start();
  client = new HttpDecider({ entry: { id: 'load', url: fake.url, maxContextTokens: 4096, limit } });
  const rt = new DecisionRuntime(client.entry, client);
  const records: DecisionRecord[] = [];
  rt.observe({ write: (r) => void records.push(r) });
  return { rt, records, f: fake };
}

describe('decision load', () => {
  it('max_concurrent 4: all 200 complete, the server never sees more than 4 in flight, none dropped', async () => {
    const { rt, records, f } = await setup({ kind: 'concurrency', maxConcurrent: 4 }, 10);
    const decisions = await Promise.all(Array.from({ length: N }, (_, i) => rt.decide(req(i), { retries: 0 })));
    expect(decisions.every((d) => d.ok && d.noul('stuck').answer === 'yes')).toBe(true);
    expect(f.served).toBe(N);
    expect(f.peak).toBeLessThanOrEqual(4);
    expect(f.peak).toBe(4); // the gate was actually used to its width
    expect(new Set(f.requests.map((r) => r.state)).size).toBe(N);
    expect(records).toHaveLength(N);
    expect(records.every((r) => r.failure === null && r.attempts === 1)).toBe(true);
    expect(rt.admission.peak).toBe(4);
    expect(f.violations).toEqual([]);
  });

  it('a quota window: all 200 complete and the token bucket holds the rate', async () => {
    const tokens = estimateTokens(encodeRequest(req(0)));
    const total = N * tokens;
    const burst = 10 * tokens;
    const seconds = 2;
    const perMs = (total - burst) / (seconds * 1000);
    const { rt, records, f } = await setup({ kind: 'window', tokensPerMinute: perMs * 60_000, burst }, 0);
    const t0 = performance.now();
    const decisions = await Promise.all(Array.from({ length: N }, (_, i) => rt.decide(req(i), { retries: 0 })));
    const elapsed = performance.now() - t0;
    expect(decisions.every((d) => d.ok)).toBe(true);
    expect(f.served).toBe(N);
    expect(records).toHaveLength(N);
    // Never more than the burst plus what the rate refilled, at any arrival.
    const arrivals = [...f.arrivals].sort((a, b) => a - b);
    arrivals.forEach((t, i) => {
      expect((i + 1) * tokens).toBeLessThanOrEqual(burst + perMs * (t - t0) + 1e-6);
    });
    // And the line kept moving: the run took about what the rate allows.
    expect(elapsed).toBeGreaterThanOrEqual(seconds * 1000 * 0.95);
    expect(elapsed).toBeLessThan(seconds * 1000 * 3);
  });

  it('a server that dies mid-run: every call settles, failures are classified, a restarted server answers again', async () => {
    const { rt, records, f } = await setup({ kind: 'concurrency', maxConcurrent: 4 }, 40);
    const port = f.port;
    let stopping: Promise<void> | null = null;
    f.script = (r, n) => {
      if (n === 5) stopping = f.stop();
      return { body: answerAll(r, 0.9), delayMs: 40 };
    };
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => rt.decide(req(i), { retries: 0, deadline: Date.now() + 30_000 })),
    );
    await stopping;
    const failed = decisions.filter((d) => !d.ok);
    expect(failed.length).toBeGreaterThan(0);
    for (const d of failed) expect(['unreachable', 'server', 'invalid']).toContain(d.failure?.kind);
    expect(records).toHaveLength(40);
    fake = await new FakeDecider({ script: (r) => ({ body: answerAll(r, 0.9) }) }).start(port);
    const again = await Promise.all(
      Array.from({ length: 10 }, (_, i) => rt.decide(req(100 + i), { retries: 2, backoffMs: 20 })),
    );
    expect(again.every((d) => d.ok)).toBe(true);
    expect(fake.served).toBe(10);
  });
});
