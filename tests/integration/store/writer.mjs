// A chalk-like process that records calls through the store, run by the store tests with
// `node writer.mjs <count> <tag>` in an environment that selects the database
// (XDG_STATE_HOME for the embedded server, CHALK_DATABASE_URL for a server). It opens the
// store exactly as a command does (starting the embedded server when needed) and prints
// `ack <id>` after each insert the database acknowledged.
import { PgStore, storeTarget } from '../../../dist/core/store/index.js';

const [count, tag] = [Number(process.argv[2]), process.argv[3] ?? 'w'];
const url = process.env.CHALK_DATABASE_URL ?? '';
const config = { str: (k) => (k === 'CHALK_DATABASE_URL' ? url : 'auto') };
const store = await PgStore.open(storeTarget(config), 120_000);
for (let i = 0; i < count; i++) {
  const id = await store.calls.record({
    repo: 'load',
    ticket: 'PROJ-1',
    branch: tag,
    loop: i,
    kind: 'continue',
    agentStatus: 'ok',
    rubricExit: 0,
    progressed: true,
    model: 'm',
    prompts: 'p',
    costUsd: 0.01,
    budgetUsd: 1,
    durationS: 1,
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    turns: 1,
    denials: 0,
    lessons: 0,
    runId: `${tag}-${i}`,
  });
  process.stdout.write(`ack ${id}\n`);
}
await store.close();
