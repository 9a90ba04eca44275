import { describe, expect, it } from 'vitest';
import {
  backfillLessonEmbeddings,
  type LessonEmbeddingStore,
  lessonEmbeddingText,
  resolveWithEmbedding,
} from '../../core/embedding/lessons.js';
import type { Embedder } from '../../core/ports/embedder.js';
import type { LessonResolve, Store } from '../../core/ports/store.js';
import { benchState, median } from '../../plugins/decider-local/bench.js';
import { readEmbedRequest } from '../../plugins/decider-local/embed/service.js';
import { EmbeddingRefused, normalise, readEmbeddings, vectorLength } from '../../plugins/decider-local/embed/wire.js';

const unit = (seed: number, dims = 384) => normalise(Array.from({ length: dims }, (_, i) => Math.sin(seed + i)));
const body = (vectors: number[][], index = true) =>
  JSON.stringify({ data: vectors.map((embedding, i) => (index ? { index: i, embedding } : { embedding })) });

describe('reading /v1/embeddings answers', () => {
  it('takes one 384-d unit vector per input, in index order', () => {
    const a = unit(1);
    const b = unit(2);
    const shuffled = JSON.stringify({
      data: [
        { index: 1, embedding: b },
        { index: 0, embedding: a },
      ],
    });
    expect(readEmbeddings(shuffled, 2)).toEqual([a, b]);
    expect(readEmbeddings(body([a], false), 1)).toEqual([a]);
  });

  it('refuses other dimensions by name', () => {
    expect(() => readEmbeddings(body([unit(1, 512)]), 1)).toThrow(
      'embedding 0 has 512 dimensions, and Chalk needs 384 (BAAI/bge-small-en-v1.5)',
    );
  });

  it('refuses a vector that is not unit length, a count that does not match, and bodies that are not answers', () => {
    const long = unit(1).map((x) => x * 2);
    expect(() => readEmbeddings(body([long]), 1)).toThrow(/embedding 0 has length 2\.0000, not unit length/);
    expect(() => readEmbeddings(body([unit(1)]), 2)).toThrow('the service answered 1 embeddings for 2 inputs');
    expect(() => readEmbeddings('{"data":', 1)).toThrow('the body is not JSON');
    expect(() => readEmbeddings('{"vectors":[]}', 1)).toThrow(EmbeddingRefused);
    expect(() => readEmbeddings(JSON.stringify({ data: [{ index: 0, embedding: ['x'] }] }), 1)).toThrow(
      EmbeddingRefused,
    );
    const dup = JSON.stringify({
      data: [
        { index: 0, embedding: unit(1) },
        { index: 0, embedding: unit(2) },
      ],
    });
    expect(() => readEmbeddings(dup, 2)).toThrow(/indexes are not 0 to 1/);
    const nan = unit(1);
    nan[3] = Number.NaN;
    expect(() => readEmbeddings(JSON.stringify({ data: [{ embedding: nan }] }).replace('null', '"NaN"'), 1)).toThrow(
      EmbeddingRefused,
    );
  });

  it('normalises to unit length, to 6 places', () => {
    const v = normalise([3, 4]);
    expect(v).toEqual([0.6, 0.8]);
    expect(vectorLength(unit(7))).toBeCloseTo(1, 5);
  });
});

describe('the service reads requests', () => {
  it('takes a string or 1 to 64 strings, of its one model', () => {
    expect(readEmbedRequest('{"input":"a"}')).toEqual({ texts: ['a'] });
    expect(readEmbedRequest('{"input":["a","b"],"model":"BAAI/bge-small-en-v1.5"}')).toEqual({ texts: ['a', 'b'] });
    expect(readEmbedRequest('{"input":[1]}')).toEqual({
      status: 422,
      message: 'input must be a string or 1 to 64 strings',
    });
    expect(readEmbedRequest(JSON.stringify({ input: Array(65).fill('a') }))).toMatchObject({ status: 422 });
    expect(readEmbedRequest('{"input":[]}')).toMatchObject({ status: 422 });
    expect(readEmbedRequest('{"input":"a","model":"text-embedding-3-small"}')).toEqual({
      status: 422,
      message: 'this service has only BAAI/bge-small-en-v1.5',
    });
    expect(readEmbedRequest('nope')).toEqual({ status: 400, message: 'the body is not JSON' });
    expect(readEmbedRequest('[1]')).toEqual({ status: 400, message: 'the body must be a JSON object' });
  });
});

class MemoryLessons implements LessonEmbeddingStore {
  readonly rows = new Map<
    number,
    { id: number; lesson: string | null; resolution: string | null; embedding?: number[] }
  >();
  writes = 0;
  async unembedded(limit: number) {
    return [...this.rows.values()].filter((r) => !r.embedding).slice(0, limit);
  }
  async setEmbedding(id: number, embedding: number[]) {
    const r = this.rows.get(id);
    if (r) r.embedding = embedding;
    this.writes++;
  }
}

const fakeEmbedder = (fail?: () => boolean): Embedder & { calls: string[][] } => {
  const calls: string[][] = [];
  return {
    dimensions: 384,
    calls,
    async embed(texts) {
      calls.push(texts);
      if (fail?.()) throw new Error('unreachable: could not be reached (ECONNREFUSED)');
      return texts.map((t) => unit(t.length));
    },
  };
};

describe('lesson embeddings', () => {
  it('embed the distilled rule, else the resolution, else nothing', () => {
    expect(lessonEmbeddingText({ lesson: 'rule', resolution: 'note' })).toBe('rule');
    expect(lessonEmbeddingText({ lesson: null, resolution: 'note' })).toBe('note');
    expect(lessonEmbeddingText({ lesson: ' ', resolution: 'note' })).toBe('note');
    expect(lessonEmbeddingText({ lesson: null, resolution: '' })).toBeNull();
  });

  it('a resolve carries the embedding; without an answer it resolves without one and says why', async () => {
    const resolved: LessonResolve[] = [];
    const store = { lessons: { resolve: async (r: LessonResolve) => void resolved.push(r) } } as unknown as Pick<
      Store,
      'lessons'
    >;
    const r = { id: 7, resolution: 'pin the clock', lesson: 'Tests that read the time pin it', resolvedBy: 'ana' };
    expect(await resolveWithEmbedding({ store, embedder: fakeEmbedder(), resolve: r })).toEqual({ embedded: true });
    expect(resolved[0]?.embedding).toHaveLength(384);
    const down = await resolveWithEmbedding({ store, embedder: fakeEmbedder(() => true), resolve: r });
    expect(down).toEqual({ embedded: false, reason: 'unreachable: could not be reached (ECONNREFUSED)' });
    expect(resolved[1]).toEqual({ ...r, embedding: null });
    expect(await resolveWithEmbedding({ store, embedder: null, resolve: r })).toEqual({
      embedded: false,
      reason: 'no embedder',
    });
  });

  it('back-fill writes every resolved lesson lacking one, in batches, skipping ones with no text', async () => {
    const lessons = new MemoryLessons();
    for (let id = 1; id <= 40; id++) lessons.rows.set(id, { id, lesson: `rule ${id}`, resolution: 'r' });
    lessons.rows.set(41, { id: 41, lesson: null, resolution: null });
    const embedder = fakeEmbedder();
    expect(await backfillLessonEmbeddings({ lessons, embedder, batch: 16 })).toEqual({ written: 40 });
    expect(embedder.calls.map((c) => c.length)).toEqual([16, 16, 8]);
    expect([...lessons.rows.values()].filter((r) => r.embedding)).toHaveLength(40);
  });

  it('back-fill stops at the first request with no answer and says why', async () => {
    const lessons = new MemoryLessons();
    for (let id = 1; id <= 20; id++) lessons.rows.set(id, { id, lesson: `rule ${id}`, resolution: null });
    let n = 0;
    const out = await backfillLessonEmbeddings({ lessons, embedder: fakeEmbedder(() => ++n > 1), batch: 16 });
    expect(out).toEqual({ written: 16, stopped: 'unreachable: could not be reached (ECONNREFUSED)' });
  });
});

describe('the benchmark', () => {
  it('is the median of its times', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(RangeError);
  });

  it('asks about a state the size a loop sends', () => {
    expect(benchState().length).toBeGreaterThan(1_000);
    expect(
      benchState()
        .split('\n')
        .filter((l) => l.includes(' | ')),
    ).toHaveLength(40);
  });
});
