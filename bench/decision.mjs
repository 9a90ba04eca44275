#!/usr/bin/env node
// The decision client's overhead per call: DecisionRuntime.decide (encode, admission, the
// undici client, decode, the record to a sink) over a bare undici POST of the same body to
// the same local fake decider, measured side by side in one run (target: at most 1.1x).
// Run after `npm run build`:   node bench/decision.mjs [calls-per-batch] [batches] [warm-up-pairs]
// (calls = calls-per-batch x batches of each kind, alternated call by call, after the
// warm-up: at least warm-up-pairs pairs (default 5000) and at least 3 s, because V8 keeps
// re-tiering zod and undici code for thousands of calls and a short warm-up charges that
// to whichever side has more code.)
// Like for like: both sides POST the same body over their own keep-alive undici Agent
// (pipelining 1) to the same server, read the whole body and JSON.parse it, and check the
// status; the client side additionally arms its deadline, validates the answers with zod,
// takes its admission permit and writes one record to a (counting) sink.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Agent, request } from 'undici';

const perBatch = Number(process.argv[2] ?? 200);
const batches = Number(process.argv[3] ?? 10);
const warmPairs = Number(process.argv[4] ?? 5000);
const dist = join(import.meta.dirname, '..', 'dist');
const { decisionRequest, noul, choice } = await import(join(dist, 'core/protocol/questions.js'));
const { encodeRequest } = await import(join(dist, 'core/protocol/codec.js'));
const { DecisionRuntime } = await import(join(dist, 'core/decision/runtime.js'));
const { HttpDecider } = await import(join(dist, 'plugins/decider-http/client.js'));

const answer = JSON.stringify({
  protocol: 1,
  model: 'bench-decider',
  answers: { stuck: { type: 'noul', noul: 0.93 }, kind: { type: 'choice', choice: 'assertion', confidence: 0.8 } },
  latency_ms: 0.1,
});
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;

const req = decisionRequest('FAILED tests/test_app.py::test_marker\nAssertionError: BROKEN exists\n'.repeat(8), {
  stuck: noul('Is the agent stuck on the same root cause as in the previous loop?'),
  kind: choice('Which kind of failure?', { assertion: 'a test asserts', crash: 'the program crashes' }),
});
const body = encodeRequest(req);

const bareAgent = new Agent({ keepAliveTimeout: 10_000, pipelining: 1 });
async function bare() {
  const res = await request(`${url}/v1/systemone`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body,
    dispatcher: bareAgent,
  });
  const parsed = JSON.parse(await res.body.text());
  if (res.statusCode !== 200 || !parsed.answers) throw new Error('bare call failed');
}

const decider = new HttpDecider({
  entry: { id: 'bench', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 4 } },
});
const runtime = new DecisionRuntime(decider.entry, decider);
let recorded = 0;
runtime.observe({ write: () => void recorded++ });
async function client() {
  const d = await runtime.decide(req, { retries: 0 });
  if (!d.ok) throw new Error(`client call failed: ${d.failure.describe()}`);
}

async function timed(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e3;
}

// Warm both paths, then alternate call by call (swapping which goes first) so that the
// machine's load falls on both alike; compare the medians of the per-call times.
const warmUntil = performance.now() + 3000;
let warmed = 0;
for (; warmed < warmPairs || performance.now() < warmUntil; warmed++) {
  await bare();
  await client();
}
const b = [];
const c = [];
for (let i = 0; i < perBatch * batches; i++) {
  if (i % 2 === 0) {
    b.push(await timed(bare));
    c.push(await timed(client));
  } else {
    c.push(await timed(client));
    b.push(await timed(bare));
  }
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const mb = median(b);
const mc = median(c);
console.log(`warm-up:               ${warmed} pairs`);
console.log(
  `bare undici POST:      ${mb.toFixed(0)} us/call (median of ${b.length} calls; reads and JSON.parses the body, checks the status)`,
);
console.log(`DecisionRuntime call:  ${mc.toFixed(0)} us/call (median of ${c.length} calls)`);
console.log(`overhead:              ${(mc - mb).toFixed(0)} us/call, ratio ${(mc / mb).toFixed(3)}x (target <= 1.1x)`);
console.log(`records written:       ${recorded}`);
await decider.close();
await bareAgent.close();
server.close();
