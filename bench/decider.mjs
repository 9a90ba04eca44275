#!/usr/bin/env node
// The decider as a loop asks it, in one run against one fake decider on loopback:
// (a) each provider's per-question overhead over a bare undici POST of the same body to the same
//     fake: hosted = HttpDecider, local = LocalDecider (its machine-wide turn lock), both through
//     core's DecisionRuntime (admission, the call's deadline, the record to a sink) with a loop's
//     options (its own 2 s LoopBudget, no retry). Alternated question by question after a warm-up;
//     median and p95 per side.
// (b) 64 questions at once to a hosted decider declared `max_concurrent` 8 (CHALK_DECIDER_LIMIT=max_concurrent=8),
//     the fake taking DELAY ms per question, each question with its own loop's 2 s budget: how
//     many are answered within it, and the rest by their recorded outcome name. Once per delay.
// Run after `npx tsc -p tsconfig.build.json`:
//   node bench/decider.mjs [questions] [warm-up] [delays-ms, comma-separated]
// Defaults: 2000 questions per side, 1000 warm-up rounds, delays 150,300 (150 ms: 8 waves of
// 8 fit in 2 s; 300 ms: they cannot). Bounded: (b) ends when every question's budget has.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';

const questions = Number(process.argv[2] ?? 2000);
const warm = Number(process.argv[3] ?? 1000);
const delays = (process.argv[4] ?? '150,300').split(',').map(Number);
const dist = join(import.meta.dirname, '..', 'dist');
const { decisionRequest, noul } = await import(join(dist, 'core/protocol/questions.js'));
const { encodeRequest } = await import(join(dist, 'core/protocol/codec.js'));
const { DecisionRuntime } = await import(join(dist, 'core/decision/runtime.js'));
const { LoopBudget } = await import(join(dist, 'core/decision/budget.js'));
const { LOOP_RETRIES } = await import(join(dist, 'core/decision/call.js'));
const { parseLimit } = await import(join(dist, 'core/protocol/entry.js'));
const { HttpDecider } = await import(join(dist, 'plugins/decider-http/client.js'));
const { LocalDecider } = await import(join(dist, 'plugins/decider-local/client.js'));

// A minimal decider protocol v1 server: refuses what is not a v1 request (422), answers every
// question with a noul after `delayMs`, and counts how many questions it holds at once.
let delayMs = 0;
let inFlight = 0;
let maxInFlight = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ protocol: 1, model: 'bench-decider', status: 'ok' }));
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = null;
    }
    const qs = body?.questions;
    if (req.url !== '/v1/systemone' || body?.protocol !== 1 || typeof body.state !== 'string' || !qs) {
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'not a decider protocol v1 request' }));
      return;
    }
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const answer = () => {
      inFlight--;
      const answers = Object.fromEntries(Object.keys(qs).map((id) => [id, { type: 'noul', noul: 0.93 }]));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ protocol: 1, model: 'bench-decider', answers, latency_ms: delayMs }));
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;

// A stuck-sized state (the loop's question is about 1-6 KB of failing tests and a diffstat).
const req = decisionRequest(
  'FAILED tests/cart.test.ts > totals > adds tax\nAssertionError: expected 10 to be 11\n'.repeat(24),
  {
    stuck: noul('Is the agent stuck on the same root cause as in the previous loop?'),
  },
);
const body = encodeRequest(req);
const entry = (limit) => ({ id: 'decider', url, maxContextTokens: 4096, limit: parseLimit(limit) });

// ---- (a) overhead per question ----
const bareAgent = new Agent({ keepAliveTimeout: 10_000, pipelining: 1 });
const state = mkdtempSync(join(tmpdir(), 'chalk-bench-decider-'));
const hosted = new HttpDecider({ entry: entry('max_concurrent=8') });
const local = new LocalDecider({
  entry: entry('max_concurrent=8'),
  askLock: join(state, 'ask.lock'),
  lastUsed: join(state, 'last-used'),
});
const hostedRt = new DecisionRuntime(hosted.entry, hosted);
const localRt = new DecisionRuntime(local.entry, local);
let recorded = 0;
for (const rt of [hostedRt, localRt]) rt.observe({ write: () => void recorded++ });
const asLoop = async (rt) => {
  const budget = new LoopBudget();
  const d = await rt.decide(req, { deadline: budget.deadline(), minStartMs: budget.minCallMs, retries: LOOP_RETRIES });
  if (!d.ok) throw new Error(`a bench question failed: ${d.failure.describe()}`);
};
const sides = {
  bare: async () => {
    const r = await request(`${url}/v1/systemone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
      dispatcher: bareAgent,
    });
    const parsed = JSON.parse(await r.body.text());
    if (r.statusCode !== 200 || !parsed.answers) throw new Error('bare POST failed');
  },
  hosted: () => asLoop(hostedRt),
  local: () => asLoop(localRt),
};
const names = Object.keys(sides);
for (let i = 0; i < warm; i++) for (const n of names) await sides[n]();
const times = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < questions; i++) {
  // Rotate which side goes first, so the machine's load falls on all alike.
  for (let k = 0; k < names.length; k++) {
    const n = names[(i + k) % names.length];
    const t0 = process.hrtime.bigint();
    await sides[n]();
    times[n].push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
}
const pct = (xs, p) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};
const med = Object.fromEntries(names.map((n) => [n, pct(times[n], 0.5)]));
const p95 = Object.fromEntries(names.map((n) => [n, pct(times[n], 0.95)]));
console.log(`(a) per question, ${questions} questions per side after ${warm} warm-up rounds (µs):`);
for (const n of names) {
  const over =
    n === 'bare'
      ? ''
      : `  overhead ${(med[n] - med.bare).toFixed(0)} µs median, ${(p95[n] - p95.bare).toFixed(0)} µs p95, ratio ${(med[n] / med.bare).toFixed(2)}x`;
  console.log(
    `    ${n.padEnd(7)} median ${med[n].toFixed(0).padStart(6)}  p95 ${p95[n].toFixed(0).padStart(6)}${over}`,
  );
}
console.log(`    records written: ${recorded} (one per runtime question)`);
await Promise.all([hosted.close(), local.close(), bareAgent.close()]);
rmSync(state, { recursive: true, force: true });

// ---- (b) 64 at once, max_concurrent 8, each with its own 2 s budget ----
for (const d of delays) {
  delayMs = d;
  maxInFlight = 0;
  const fleet = new HttpDecider({ entry: entry('max_concurrent=8') });
  const rt = new DecisionRuntime(fleet.entry, fleet);
  const outcomes = new Map();
  let answered = 0;
  rt.observe({
    write: (r) => {
      if (r.failure) outcomes.set(r.failure.kind, (outcomes.get(r.failure.kind) ?? 0) + 1);
    },
  });
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: 64 }, async () => {
      const budget = new LoopBudget();
      const deadline = budget.deadline();
      const dec = await rt.decide(req, { deadline, minStartMs: budget.minCallMs, retries: LOOP_RETRIES });
      return dec.ok && Date.now() <= deadline;
    }),
  );
  const wall = performance.now() - t0;
  answered = results.filter(Boolean).length;
  const rest = [...outcomes].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
  console.log(
    `(b) 64 at once, max_concurrent 8, fake ${d} ms/question: ${answered}/64 answered within the 2 s budget; the rest: ${rest}; at most ${maxInFlight} at the fake at once; all done in ${wall.toFixed(0)} ms`,
  );
  await fleet.close();
}
server.close();
