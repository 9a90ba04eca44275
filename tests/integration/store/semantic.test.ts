import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config/config.js';
import { LoopBudget } from '../../../core/decision/budget.js';
import { DeciderSession } from '../../../core/decision/session.js';
import { backfillLessonEmbeddings } from '../../../core/embedding/lessons.js';
import { deciderRungs } from '../../../core/memory/decider-rungs.js';
import { LadderMemory } from '../../../core/memory/memory.js';
import { storeLadder } from '../../../core/memory/rungs.js';
import type { Embedder } from '../../../core/ports/embedder.js';
import type { RecallKey } from '../../../core/ports/lesson-memory.js';
import type { Store } from '../../../core/ports/store.js';
import { PgStore } from '../../../core/store/index.js';
import { CollectingLog } from '../../../core/testing/log.js';
import { MemoryStore } from '../../../core/testing/store.js';
import { BACKENDS } from './backends.js';

/**
 * The semantic rung's queries against the real databases and the MemoryStore. The embedded
 * server (PGlite) has pgvector: cosine >= 0.7 on the HNSW index, nearest first, within the scope
 * rule. A Postgres without pgvector (CI's 15) keeps lessons.embedding as real[]: the gate says
 * so, the rung embeds nothing and finds nothing, and the loop's recall goes on as without it.
 * Both write and list embeddings for the back-fill.
 */
interface Subject {
  name: string;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}
const SUBJECTS: Subject[] = [
  { name: 'memory', open: async () => ({ store: new MemoryStore(), dispose: async () => {} }) },
  ...BACKENDS.map(
    (b): Subject => ({
      name: b.name,
      open: async () => {
        const db = await b.fresh();
        const store = await PgStore.open(db.target, 120_000);
        return {
          store,
          dispose: async () => {
            await store.close();
            await db.dispose();
          },
        };
      },
    }),
  ),
];

const DIM = 384;
/** A unit vector at `angle` radians from axis 0 toward axis 1: its cosine to axis 0 is cos(angle). */
const at = (angle: number) =>
  Array.from({ length: DIM }, (_, j) => (j === 0 ? Math.cos(angle) : j === 1 ? Math.sin(angle) : 0));
const AXIS = at(0);

describe.each(SUBJECTS)('semantic recall on $name', (subject) => {
  let s: Awaited<ReturnType<Subject['open']>>;
  beforeAll(async () => {
    s = await subject.open();
  });
  afterAll(async () => s?.dispose());

  async function lesson(o: { repo: string; embedding?: number[] | null; scope?: 'general' | 'repo'; fix?: string }) {
    const id = await s.store.lessons.open({ repo: o.repo, ticket: 'SHOP-1', signature: `sig ${o.fix ?? ''}` });
    await s.store.lessons.resolve({
      id,
      resolution: 'note',
      lesson: o.fix ?? 'a rule',
      resolvedBy: 'me',
      scope: o.scope ?? 'repo',
      embedding: o.embedding ?? null,
    });
    return id;
  }

  it('finds lessons at cosine >= 0.7, nearest first, within the scope rule; or, without pgvector, nothing', async () => {
    const repo = `sem-${subject.name}`;
    const near = await lesson({ repo, embedding: at(0.1), fix: 'near' });
    const nearer = await lesson({ repo, embedding: at(0.05), fix: 'nearer' });
    await lesson({ repo, embedding: at(Math.acos(0.69)), fix: 'just too far' });
    const general = await lesson({ repo: 'other', embedding: at(0.2), scope: 'general', fix: 'general' });
    await lesson({ repo: 'other', embedding: at(0), fix: 'another repository' });
    const forgotten = await lesson({ repo, embedding: at(0), fix: 'forgotten' });
    await s.store.lessons.forget(forgotten);
    const gate = await s.store.lessons.semanticGate();
    expect(gate.resolved).toBe(5);
    if (subject.name === 'memory' || subject.name === 'embedded') expect(gate.vector).toBe(true);
    const found = await s.store.lessons.semantic({ repo, embedding: AXIS, minCosine: 0.7, limit: 5 });
    if (!gate.vector) {
      expect(found).toEqual([]);
      return;
    }
    expect(found.map((l) => l.id)).toEqual([nearer, near, general]);
    expect(found[0]?.cosine).toBeCloseTo(Math.cos(0.05), 4);
    expect(found[0]?.lesson).toBe('nearer');
    expect(found.every((l) => (l.cosine ?? 0) >= 0.7)).toBe(true);
  });

  it('lists resolved lessons lacking an embedding, oldest first, and writes one (the back-fill)', async () => {
    const repo = `fill-${subject.name}`;
    const first = await lesson({ repo, fix: 'first' });
    const second = await lesson({ repo, fix: 'second' });
    const open = await s.store.lessons.open({ repo, ticket: 'SHOP-2', signature: 'still open' });
    const listed = (await s.store.lessons.unembedded(100)).map((l) => l.id);
    expect(listed.filter((id) => [first, second, open].includes(id))).toEqual([first, second]);
    const vectors: string[][] = [];
    const embedder: Embedder = {
      dimensions: DIM,
      embed: async (texts) => {
        vectors.push(texts);
        return texts.map(() => at(0.3));
      },
    };
    const r = await backfillLessonEmbeddings({ lessons: s.store.lessons, embedder });
    expect(r.stopped).toBeUndefined();
    expect(vectors.flat()).toEqual(expect.arrayContaining(['first', 'second']));
    expect((await s.store.lessons.unembedded(100)).map((l) => l.id)).toEqual([]);
    await expect(s.store.lessons.setEmbedding(999_999, at(0))).rejects.toThrow(/no lesson 999999/);
  });

  it('the semantic rung embeds the failure only where it can search (no pgvector: skipped cleanly)', async () => {
    const config = loadConfig({
      root: null,
      env: { CHALK_DECIDER: 'shadow', CHALK_DECIDER_MIN_LESSONS: '1' },
    });
    const log = new CollectingLog();
    const embedded: string[][] = [];
    const embedder: Embedder = {
      dimensions: DIM,
      embed: async (texts) => {
        embedded.push(texts);
        return texts.map(() => AXIS);
      },
    };
    const session = new DeciderSession({ config, decider: () => null, store: () => s.store, log, env: {} });
    const [semantic] = deciderRungs({ store: s.store, config, embedder: () => embedder, session, log });
    const key: RecallKey = {
      repo: `sem-${subject.name}`,
      mode: 'failure',
      query: 'E: boom',
      fingerprint: null,
      firstError: 'E: boom',
    };
    const context = { runId: 'SHOP-1-1', ticket: 'SHOP-1', loop: 2, budget: new LoopBudget() };
    const found = await semantic?.climb(key, [], context);
    const gate = await s.store.lessons.semanticGate();
    if (gate.vector) {
      expect(embedded).toEqual([['E: boom']]);
      expect(found?.map((l) => l.how)).toEqual(['semantic', 'semantic', 'semantic']);
    } else {
      expect(embedded).toEqual([]);
      expect(found).toEqual([]);
    }
    // And the whole ladder (no decider bound: the rerank asks nothing) gives the plain ladder either way.
    const memory = new LadderMemory([
      ...storeLadder(s.store),
      ...deciderRungs({ store: s.store, config, embedder: () => embedder, session, log }),
    ]);
    const recalled = await memory.recall(key, context);
    expect(recalled.filter((l) => l.how === 'semantic')).toEqual([]);
    // With semantic candidates the rerank would ask, and says once that no plugin provides a decider.
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.text)).toEqual(
      gate.vector ? ['[SHOP-1] going on with the decider off: no plugin provides a decider'] : [],
    );
  });
});
