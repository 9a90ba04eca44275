#!/usr/bin/env node
// What taking turns costs the local decider per question: LocalDecider.decide (the machine-wide
// turn lock, a directory made and removed per question, and the hosted client under it) over
// HttpDecider.decide (the same client, no turns) and over a bare undici POST of the same body,
// to the same local fake decider, alternated call by call in one run.
// Run after `npx tsc -p tsconfig.build.json`:   node bench/decider-local.mjs [calls] [warm-up]
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';

const calls = Number(process.argv[2] ?? 2000);
const warm = Number(process.argv[3] ?? 2000);
const dist = join(import.meta.dirname, '..', 'dist');
const { decisionRequest, noul } = await import(join(dist, 'core/protocol/questions.js'));
const { encodeRequest } = await import(join(dist, 'core/protocol/codec.js'));
const { HttpDecider } = await import(join(dist, 'plugins/decider-http/client.js'));
const { LocalDecider } = await import(join(dist, 'plugins/decider-local/client.js'));

const answer = JSON.stringify({ protocol: 1, model: 'bench', answers: { stuck: { type: 'noul', noul: 0.93 } } });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;
const req = decisionRequest('previous loop: FAILED tests/cart.test.ts\n'.repeat(20), {
  stuck: noul('Is the agent stuck?'),
});
const body = encodeRequest(req);
const entry = { id: 'decider', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 4 } };
const state = mkdtempSync(join(tmpdir(), 'chalk-bench-local-'));
const local = new LocalDecider({ entry, askLock: join(state, 'ask.lock'), lastUsed: join(state, 'last-used') });
const hosted = new HttpDecider({ entry });
const bareAgent = new Agent({ keepAliveTimeout: 10_000, pipelining: 1 });

const sides = {
  bare: async () => {
    const r = await request(`${url}/v1/systemone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher: bareAgent,
    });
    JSON.parse(await r.body.text());
    if (r.statusCode !== 200) throw new Error('bare failed');
  },
  hosted: async () => {
    const r = await hosted.decide(req, { deadline: Date.now() + 2000 });
    if (!r.ok) throw new Error(r.failure.describe());
  },
  local: async () => {
    const r = await local.decide(req, { deadline: Date.now() + 2000 });
    if (!r.ok) throw new Error(r.failure.describe());
  },
};
const total = { bare: 0, hosted: 0, local: 0 };
for (let i = 0; i < warm; i++) for (const f of Object.values(sides)) await f();
for (let i = 0; i < calls; i++) {
  for (const [name, f] of Object.entries(sides)) {
    const t0 = performance.now();
    await f();
    total[name] += performance.now() - t0;
  }
}
const per = (n) => (total[n] / calls) * 1000;
console.log(
  `per question over ${calls} calls each (µs): bare ${per('bare').toFixed(0)}, hosted ${per('hosted').toFixed(0)}, local ${per('local').toFixed(0)}`,
);
console.log(
  `local / bare ${(per('local') / per('bare')).toFixed(2)}x, local / hosted ${(per('local') / per('hosted')).toFixed(2)}x, turn cost ${(per('local') - per('hosted')).toFixed(0)} µs`,
);
await Promise.all([local.close(), hosted.close(), bareAgent.close()]);
server.close();
