// One chalk process asking the local decider one question: `node decider-local-caller.mjs URL
// LOCKDIR BUDGET_MS`. Built code (dist/), so it is the shipped client. Prints `ready`, waits for
// a line on stdin (every caller starts together), asks, prints one JSON line and exits.
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const [url, lock, budget] = process.argv.slice(2);
const root = join(import.meta.dirname, '..', '..', 'dist');
const { LocalDecider } = await import(join(root, 'plugins', 'decider-local', 'client.js'));
const decider = new LocalDecider({
  entry: { id: 'decider', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 4 } },
  url,
  askLock: lock,
});
const request = {
  state: 'previous loop: ...\ncurrent loop: ...',
  questions: { stuck: { type: 'noul', instructions: 'Is the agent stuck?' } },
};
// Connect before the start line, so the measured time is the turn and the answer only.
await decider.health({ timeoutMs: 2000 });
process.stdout.write('ready\n');
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
const t0 = performance.now();
const reply = await decider.decide(request, { deadline: Date.now() + Number(budget) });
const elapsed = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ ok: reply.ok, kind: reply.ok ? null : reply.failure.kind, elapsed })}\n`);
await decider.close();
