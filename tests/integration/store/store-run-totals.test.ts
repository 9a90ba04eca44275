import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord, Store } from '../../../core/ports/store.js';
import { PgStore } from '../../../core/store/index.js';
import { MemoryStore } from '../../../core/testing/index.js';
import { BACKENDS } from './backends.js';

/**
 * `calls.ofRun`: what a killed run's rows add up to when the next `chalk run`
 * resumes it (core/run/resume/resume.ts), on both databases and the in-memory store
 * the in-process tests use, with the same rows and the same answers.
 */

const call = (over: Partial<CallRecord>): CallRecord => ({
  repo: 'shop',
  ticket: 'PROJ-1',
  branch: 'chalk/PROJ-1',
  loop: 1,
  kind: 'continue',
  agentStatus: 'ok',
  rubricExit: 0,
  progressed: true,
  model: 'claude-x',
  prompts: 'ab12cd34',
  costUsd: 0.25,
  budgetUsd: 1,
  durationS: 12,
  inputTokens: 100,
  outputTokens: 50,
  cacheReadTokens: 10,
  cacheWriteTokens: 5,
  turns: 3,
  denials: 0,
  lessons: 0,
  ...over,
});

async function seed(store: Store): Promise<void> {
  const runId = 'PROJ-1-1700000000';
  await store.calls.record(call({ runId, loop: 0, kind: 'spec-check', agentStatus: 'pass', costUsd: 0.0123 }));
  await store.calls.record(call({ runId, loop: 1, costUsd: 0.25 }));
  await store.calls.record(call({ runId, loop: 2, kind: 'retry', progressed: false, costUsd: 0.5 }));
  // Loop 3 interrupted by SIGTERM: no cost, not a finished loop.
  await store.calls.record(call({ runId, loop: 3, agentStatus: 'interrupted', progressed: false, costUsd: 0 }));
  // Another run of the ticket, another repository's run of the same id: neither counts.
  await store.calls.record(call({ runId: 'PROJ-1-1600000000', loop: 7, costUsd: 5 }));
  await store.calls.record(call({ repo: 'other', runId, loop: 9, costUsd: 9 }));
  // A run whose loop 2 ran twice (interrupted, then resumed and finished): the newest row of it speaks.
  const again = 'PROJ-2-1700000000';
  await store.calls.record(call({ ticket: 'PROJ-2', runId: again, loop: 1, costUsd: 0.1 }));
  await store.calls.record(call({ ticket: 'PROJ-2', runId: again, loop: 2, progressed: false, costUsd: 0.2 }));
  await store.calls.record(call({ ticket: 'PROJ-2', runId: again, loop: 2, progressed: true, costUsd: 0.3 }));
}

async function expectTotals(store: Store): Promise<void> {
  const t = await store.calls.ofRun('shop', 'PROJ-1-1700000000');
  expect(t.spentUsd).toBeCloseTo(0.7623, 6);
  expect(t).toMatchObject({ lastLoop: 2, lastLoopProgressed: false });
  expect(await store.calls.ofRun('shop', 'PROJ-2-1700000000')).toMatchObject({
    lastLoop: 2,
    lastLoopProgressed: true,
  });
  expect(await store.calls.ofRun('shop', 'PROJ-9-1')).toEqual({ spentUsd: 0, lastLoop: 0, lastLoopProgressed: null });
}

describe.each(BACKENDS)('run totals on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;
  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
  });
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  it('adds up one run id of one repository: all calls cost, the last finished loop and whether it progressed', async () => {
    await seed(store);
    await expectTotals(store);
  });
});

describe('run totals in the memory store', () => {
  it('gives the database answers', async () => {
    const store = new MemoryStore();
    await seed(store);
    await expectTotals(store);
  });
});
