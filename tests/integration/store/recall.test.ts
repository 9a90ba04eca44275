import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LadderMemory } from '../../../core/memory/memory.js';
import { storeLadder } from '../../../core/memory/rungs.js';
import type { RecallKey } from '../../../core/ports/lesson-memory.js';
import type { LessonScope, Store } from '../../../core/ports/store.js';
import { PgStore } from '../../../core/store/index.js';
import { MemoryStore } from '../../../core/testing/store.js';
import { similarity, wordSimilarity } from '../../../core/testing/trigram.js';
import { BACKENDS } from './backends.js';

/** The recall rungs against the real databases (PGlite and Postgres) and the MemoryStore: the same answers. */
interface Subject {
  name: string;
  open(): Promise<{ store: Store; pg: PgStore | null; dispose(): Promise<void> }>;
}
const SUBJECTS: Subject[] = [
  {
    name: 'memory',
    open: async () => ({ store: new MemoryStore(), pg: null, dispose: async () => {} }),
  },
  ...BACKENDS.map(
    (b): Subject => ({
      name: b.name,
      open: async () => {
        const db = await b.fresh();
        const store = await PgStore.open(db.target, 120_000);
        return {
          store,
          pg: store,
          dispose: async () => {
            await store.close();
            await db.dispose();
          },
        };
      },
    }),
  ),
];

const E = 'Error: connect ECONNREFUSED 127.0.0.1:6379 at redis client';
const SPEC =
  '# SHOP-3 cache\nThe product page reads prices through the cache. When the cache is down the page must still load.\n- [ ] prices load when redis refuses connections';
const FEEDBACK =
  'rubric failed (exit 2)\nnpm ERR! missing script: test\nlast 20 lines of output:\nnpm ERR! A complete log of this run can be found in /home/chalk/.npm/_logs';

const key = (repo: string, over: Partial<RecallKey>): RecallKey => ({
  repo,
  mode: 'text',
  query: '',
  fingerprint: null,
  firstError: null,
  ...over,
});
const failureKey = (repo: string, fingerprint: string | null = null) =>
  key(repo, { mode: 'failure', query: `${E}\ntests/cache.test.ts > prices`, firstError: E, fingerprint });

describe.each(SUBJECTS)('lesson recall on $name', (subject) => {
  let s: Awaited<ReturnType<Subject['open']>>;
  let memory: LadderMemory;
  beforeAll(async () => {
    s = await subject.open();
    memory = new LadderMemory(storeLadder(s.store));
  });
  afterAll(async () => s?.dispose());

  /** A lesson, resolved unless told otherwise. */
  async function lesson(o: {
    repo: string;
    signature?: string;
    firstError?: string | null;
    fingerprint?: string | null;
    scope?: LessonScope | null;
    resolved?: boolean;
    fix?: string;
  }): Promise<number> {
    const id = await s.store.lessons.open({
      repo: o.repo,
      ticket: 'SHOP-1',
      signature: o.signature ?? `rubric failed (exit 1)\n${o.firstError ?? 'something else entirely'}`,
      fingerprint: o.fingerprint ?? null,
      firstError: o.firstError ?? null,
    });
    if (o.resolved !== false) {
      await s.store.lessons.resolve({
        id,
        resolution: 'note',
        lesson: o.fix ?? `fix ${id}`,
        resolvedBy: 'me',
        scope: o.scope === undefined ? 'repo' : o.scope,
      });
    }
    return id;
  }

  it('puts the exact fingerprint first, before a closer lexical match, and only from the same repository', async () => {
    const repo = 'exact';
    const exact = await lesson({ repo, fingerprint: 'f'.repeat(64), firstError: 'KeyError: totally unrelated words' });
    const near = await lesson({ repo, firstError: E });
    const general = await lesson({
      repo: 'elsewhere',
      fingerprint: 'f'.repeat(64),
      firstError: 'KeyError',
      scope: 'general',
    });
    const found = await memory.recall(failureKey(repo, 'f'.repeat(64)));
    await s.store.lessons.forget(general); // general lessons reach every repository, the other tests' too
    expect(found.map((l) => [l.id, l.how])).toEqual([
      [exact, 'exact'],
      [near, 'lexical'],
    ]);
    expect(found[1]?.similarity).toBe(1);
  });

  it('failure mode: similarity(first_error, E) above 0.5 is recalled, just below is not', async () => {
    const repo = 'failure';
    const above = 'Error: connect ECONNREFUSED 127.0.0.1:5432 at pg pool';
    const below = 'Error: connect ECONNREFUSED 10.0.0.1:5432 at postgres pool';
    expect(similarity(above, E)).toBeGreaterThan(0.5);
    expect(similarity(above, E)).toBeLessThan(0.56);
    expect(similarity(below, E)).toBeGreaterThan(0.44);
    const a = await lesson({ repo, firstError: above });
    await lesson({ repo, firstError: below });
    const found = await memory.recall(failureKey(repo));
    expect(found.map((l) => l.id)).toEqual([a]);
    expect(found[0]?.similarity).toBeCloseTo(similarity(above, E), 3);
  });

  it('failure mode: a lesson without a first error is compared by its signature (> 0.1)', async () => {
    const repo = 'failure-legacy';
    const sig = await lesson({ repo, signature: 'rubric failed: ECONNREFUSED 127.0.0.1:6379 redis', firstError: null });
    await lesson({ repo, signature: 'npm ERR! code ELIFECYCLE', firstError: null });
    expect((await memory.recall(failureKey(repo))).map((l) => l.id)).toEqual([sig]);
  });

  it('spec mode: word_similarity(first error or signature, spec) above 0.6 is recalled, just below is not', async () => {
    const repo = 'spec';
    const above = 'redis rejects connections';
    const below = 'redis refuses all clients';
    expect(wordSimilarity(above, SPEC)).toBeGreaterThan(0.6);
    expect(wordSimilarity(above, SPEC)).toBeLessThan(0.65);
    expect(wordSimilarity(below, SPEC)).toBeGreaterThan(0.53);
    expect(wordSimilarity(below, SPEC)).toBeLessThan(0.6);
    const a = await lesson({ repo, firstError: above });
    await lesson({ repo, firstError: below });
    const bySignature = await lesson({ repo, signature: 'the cache is down', firstError: null });
    const found = await memory.recall(key(repo, { mode: 'spec', query: SPEC }));
    expect(found.map((l) => l.id)).toEqual([bySignature, a]);
    expect(found[1]?.similarity).toBeCloseTo(wordSimilarity(above, SPEC), 3);
  });

  it('text mode: similarity(signature, feedback) above 0.1 is recalled, just below is not', async () => {
    const repo = 'text';
    const above = 'missing script';
    const below = 'npm ERR! code ELIFECYCLE errno 1';
    expect(similarity(above, FEEDBACK)).toBeGreaterThan(0.1);
    expect(similarity(above, FEEDBACK)).toBeLessThan(0.14);
    expect(similarity(below, FEEDBACK)).toBeGreaterThan(0.07);
    expect(similarity(below, FEEDBACK)).toBeLessThan(0.1);
    const a = await lesson({ repo, signature: above, firstError: 'x' });
    await lesson({ repo, signature: below });
    const found = await memory.recall(key(repo, { mode: 'text', query: FEEDBACK }));
    expect(found.map((l) => l.id)).toEqual([a]);
    expect(found[0]?.similarity).toBeCloseTo(similarity(above, FEEDBACK), 3);
  });

  it('scope: general lessons from anywhere; repo, none and unscoped ones only in their own repository', async () => {
    const here = 'scope-here';
    const general = await lesson({ repo: 'scope-there', firstError: E, scope: 'general' });
    for (const scope of ['repo', 'none', null] as const) await lesson({ repo: 'scope-there', firstError: E, scope });
    const own: number[] = [];
    for (const scope of ['repo', 'none'] as const)
      own.push(await lesson({ repo: here, firstError: `${E} again`, scope }));
    const found = await memory.recall(failureKey(here));
    await s.store.lessons.forget(general); // general lessons reach every repository, the other tests' too
    expect(found.map((l) => l.id).sort((a, b) => a - b)).toEqual([general, ...own].sort((a, b) => a - b));
  });

  it('never recalls an open or a forgotten lesson, even with the same fingerprint', async () => {
    const repo = 'hidden';
    const fp = 'a'.repeat(64);
    await lesson({ repo, firstError: E, fingerprint: fp, resolved: false });
    const forgotten = await lesson({ repo, firstError: E, fingerprint: fp });
    expect((await memory.recall(failureKey(repo, fp))).map((l) => l.id)).toEqual([forgotten]);
    expect(await s.store.lessons.forget(forgotten)).toBe(true);
    expect(await memory.recall(failureKey(repo, fp))).toEqual([]);
    expect(await s.store.lessons.exact({ repo, fingerprint: fp, limit: 3 })).toEqual([]);
  });

  it('gives at most 3, best score first, then the newest', async () => {
    const repo = 'many';
    const same: number[] = [];
    for (let i = 0; i < 4; i++) same.push(await lesson({ repo, firstError: E }));
    const worse = await lesson({ repo, firstError: 'Error: connect ECONNREFUSED 127.0.0.1:6379 at redis' });
    const found = await memory.recall(failureKey(repo));
    expect(found.map((l) => l.id)).toEqual([...same].reverse().slice(0, 3));
    const lexical = await s.store.lessons.lexical({ repo, mode: 'failure', query: E, firstError: E, limit: 5 });
    expect(lexical.map((l) => l.id)).toEqual([...[...same].reverse(), worse]);
  });

  it('a text with more trigrams than the nearest-neighbour index holds is stored and recalled by both rules', async () => {
    const repo = 'long';
    // 700 words of 8 hex digits: over 3,000 distinct trigrams (schema.sql's chalk_knn_trgms() is 2,000).
    const long = Array.from({ length: 700 }, (_, i) =>
      createHash('md5').update(`w${i}`).digest('hex').slice(0, 8),
    ).join(' ');
    const bySignature = await lesson({ repo, signature: `rubric failed (exit 1)\n${long}`, firstError: 'x' });
    const byFirstError = await lesson({ repo, firstError: long });
    await lesson({ repo, signature: 'npm ERR! code ELIFECYCLE', firstError: null });
    const feedback = `rubric failed (exit 1)\n${long.slice(0, 3000)}`;
    const text = await memory.recall(key(repo, { mode: 'text', query: feedback }));
    if (s.pg) {
      const r = await s.pg.pool.query(
        'SELECT signature_trgms > chalk_knn_trgms() AS long, first_error_trgms > chalk_knn_trgms() AS long_error FROM lessons WHERE id = $1',
        [byFirstError],
      );
      expect(r.rows).toEqual([{ long: true, long_error: true }]);
    }
    // The same signature (the lesson helper's default is the first error under the reason): a tie, newest first.
    expect(text.map((l) => l.id)).toEqual([byFirstError, bySignature]);
    expect(text[0]?.similarity).toBeCloseTo(similarity(`rubric failed (exit 1)\n${long}`, feedback), 3);
    const failure = await memory.recall(key(repo, { mode: 'failure', query: long, firstError: long }));
    expect(failure.map((l) => [l.id, l.similarity])).toEqual([[byFirstError, 1]]);
  });

  it('text mode: a text too long for the nearest-neighbour index is recalled just above 0.1', async () => {
    const repo = 'long-low';
    const long = Array.from({ length: 700 }, (_, i) =>
      createHash('md5').update(`w${i}`).digest('hex').slice(0, 8),
    ).join(' ');
    const signature = `rubric failed (exit 1)\n${long}`;
    const feedback = `${FEEDBACK}\n${long.slice(0, 400)}`;
    expect(similarity(signature, feedback)).toBeGreaterThan(0.1);
    expect(similarity(signature, feedback)).toBeLessThan(0.12);
    const id = await lesson({ repo, signature, firstError: 'x' });
    const found = await memory.recall(key(repo, { mode: 'text', query: feedback }));
    expect(found.map((l) => l.id)).toEqual([id]);
    expect(found[0]?.similarity).toBeCloseTo(similarity(signature, feedback), 3);
  });

  it('breaks a tie of more lessons than it reads at first by the newest', async () => {
    const repo = 'ties';
    const same: number[] = [];
    for (let i = 0; i < 20; i++) same.push(await lesson({ repo, signature: 'missing script', firstError: 'x' }));
    const found = await memory.recall(key(repo, { mode: 'text', query: FEEDBACK }));
    expect(found.map((l) => l.id)).toEqual([...same].reverse().slice(0, 3));
  });

  it('lists lessons with times recalled and times the loop then passed; scope and forget change them', async () => {
    const repo = 'listed';
    const a = await lesson({ repo, firstError: E });
    const open = await lesson({ repo, firstError: E, resolved: false });
    const base = {
      repo,
      ticket: 'SHOP-1',
      branch: 'b',
      kind: 'retry',
      agentStatus: 'ok',
      rubricExit: 0,
      model: 'm',
      prompts: 'p',
      costUsd: 0,
      budgetUsd: 1,
      durationS: 1,
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      turns: 1,
      denials: 0,
      lessons: 1,
    };
    const c1 = await s.store.calls.record({ ...base, loop: 2, progressed: false });
    const c2 = await s.store.calls.record({ ...base, loop: 3, progressed: true });
    for (const [callId, loop] of [
      [c1, 2],
      [c2, 3],
    ] as const) {
      await s.store.lessons.recordRecalls({
        callId,
        runId: 'SHOP-1-1',
        loop,
        lessons: [{ lessonId: a, how: 'lexical' }],
      });
    }
    const mine = await s.store.lessons.list({ repo });
    expect(mine.map((l) => [l.id, l.recalled, l.passed])).toEqual([[a, 2, 1]]);
    expect((await s.store.lessons.list({})).map((l) => l.id)).toEqual(expect.arrayContaining([a, open]));
    expect(await s.store.lessons.setScope(a, 'general')).toBe(true);
    expect((await s.store.lessons.get(a))?.scope).toBe('general');
    expect(await s.store.lessons.forget(a)).toBe(true);
    expect(await s.store.lessons.list({ repo })).toEqual([]);
    expect((await s.store.lessons.get(a))?.forgottenAt).toBeInstanceOf(Date);
    expect(await s.store.lessons.setScope(999_999, 'repo')).toBe(false);
    expect(await s.store.lessons.forget(999_999)).toBe(false);
    expect(await s.store.lessons.get(999_999)).toBeNull();
  });

  it.skipIf(subject.name === 'memory')(
    'at 10,000 resolved lessons no recall statement scans lessons sequentially',
    { timeout: 300_000 },
    async () => {
      const pool = s.pg!.pool;
      await pool.query(
        `INSERT INTO lessons (repo, ticket, signature, first_error, fingerprint, scope, resolution, lesson, resolved_by, resolved_at)
         SELECT CASE WHEN g % 10 = 0 THEN 'other' ELSE 'plan' END, 'PROJ-' || g,
                'rubric failed (exit 1)' || chr(10) || md5(g::text) || ' ' || md5((g + 1)::text) || ' at line ' || g,
                CASE WHEN g % 3 = 0 THEN NULL ELSE 'Error ' || md5((g * 7)::text) || ' in ' || md5((g * 3)::text) END,
                md5((g * 11)::text), (ARRAY['repo', 'general', 'none'])[g % 3 + 1], 'note', 'lesson', 'me', now()
         FROM generate_series(1, 10000) g`,
      );
      await pool.query('ANALYZE lessons');
      // With the bitmaps' statistics too: the plans are the ones an analysed database gets.
      await pool.query('ANALYZE lesson_bits');
      const keys: RecallKey[] = [
        failureKey('plan', 'b'.repeat(64)),
        key('plan', { mode: 'spec', query: SPEC }),
        key('plan', { mode: 'text', query: FEEDBACK }),
      ];
      for (const k of keys) {
        const plans = await s.pg!.explainRecall({ ...k, limit: 3 });
        expect(plans.length).toBeGreaterThan(0);
        for (const p of plans) {
          expect(p.plan, `${k.mode} ${p.rung}`).not.toMatch(/Seq Scan on lessons/);
          expect(p.plan, `${k.mode} ${p.rung}`).toMatch(/Index Scan/);
        }
      }
    },
  );
});
