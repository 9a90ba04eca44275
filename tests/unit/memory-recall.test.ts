import { describe, expect, it } from 'vitest';
import { recallKey } from '../../core/memory/key.js';
import { climbLadder, type LadderRung, settle } from '../../core/memory/ladder.js';
import { LadderMemory } from '../../core/memory/memory.js';
import { promptLesson } from '../../core/memory/prompt-lesson.js';
import { RECALL_QUERY_MAX, type RecallKey } from '../../core/ports/lesson-memory.js';
import type { RecalledLesson } from '../../core/ports/store.js';
import { similarity, trigrams, wordSimilarity } from '../../core/testing/trigram.js';

const lesson = (id: number, how: RecalledLesson['how'], over: Partial<RecalledLesson> = {}): RecalledLesson => ({
  id,
  repo: 'shop',
  ticket: 'T-1',
  signature: `sig ${id}`,
  resolution: 'note',
  lesson: `lesson ${id}`,
  resolvedBy: 'me',
  createdAt: new Date(0),
  resolvedAt: new Date(0),
  runId: null,
  fingerprint: null,
  firstError: null,
  scope: 'repo',
  forgottenAt: null,
  similarity: 0.5,
  cosine: null,
  how,
  ...over,
});
const KEY: RecallKey = { repo: 'shop', mode: 'failure', query: 'E', fingerprint: 'f', firstError: 'E' };
const rung = (name: string, f: (found: readonly RecalledLesson[]) => RecalledLesson[]): LadderRung => ({
  name,
  climb: async (_k, found) => f(found),
});

describe('the recall key', () => {
  it('is spec mode on the whole spec before any failure (and after progress resets it)', () => {
    expect(recallKey({ repo: 'shop', spec: '# T-1\n- [ ] a', failure: null })).toEqual({
      repo: 'shop',
      mode: 'spec',
      query: '# T-1\n- [ ] a',
      fingerprint: null,
      firstError: null,
    });
  });

  it('is failure mode after a failed loop with a fingerprint or a first error: E, a newline, the tests', () => {
    const k = recallKey({
      repo: 'shop',
      spec: 'unused',
      failure: { fingerprint: 'abc', firstError: 'E: boom', failingTests: ['t::a', 't::b'], feedback: 'fb' },
    });
    expect(k).toEqual({
      repo: 'shop',
      mode: 'failure',
      query: 'E: boom\nt::a\nt::b',
      fingerprint: 'abc',
      firstError: 'E: boom',
    });
    const noFp = recallKey({
      repo: 'shop',
      spec: '',
      failure: { fingerprint: null, firstError: 'E: boom', failingTests: null, feedback: 'fb' },
    });
    expect(noFp).toMatchObject({ mode: 'failure', query: 'E: boom', fingerprint: null });
    const noE = recallKey({
      repo: 'shop',
      spec: '',
      failure: { fingerprint: 'abc', firstError: '', failingTests: ['t::a'], feedback: 'fb' },
    });
    expect(noE).toMatchObject({ mode: 'failure', query: '\nt::a', fingerprint: 'abc', firstError: null });
  });

  it('is text mode on the feedback otherwise, every query cut to 4,000 characters', () => {
    const long = 'x'.repeat(RECALL_QUERY_MAX + 50);
    const k = recallKey({
      repo: 'shop',
      spec: '',
      failure: { fingerprint: null, firstError: null, failingTests: null, feedback: long },
    });
    expect(k.mode).toBe('text');
    expect(k.query).toHaveLength(RECALL_QUERY_MAX);
    expect(recallKey({ repo: 'shop', spec: long, failure: null }).query).toHaveLength(RECALL_QUERY_MAX);
    const e = recallKey({
      repo: 'shop',
      spec: '',
      failure: { fingerprint: 'f', firstError: long, failingTests: ['t'], feedback: '' },
    });
    expect(e.query).toHaveLength(RECALL_QUERY_MAX);
    expect(e.firstError).toHaveLength(RECALL_QUERY_MAX);
  });
});

describe('the ladder', () => {
  it('keeps exact lessons first whatever a later rung does, each lesson once, at most 3', async () => {
    const seen: number[][] = [];
    const found = await climbLadder(
      [
        rung('exact', () => [lesson(1, 'exact')]),
        rung('lexical', (f) => [...f, lesson(5, 'lexical'), lesson(1, 'lexical'), lesson(4, 'lexical')]),
        // A later rung (a rerank, say) that puts its favourite first and adds one.
        rung('rerank', (f) => {
          seen.push(f.map((l) => l.id));
          return [lesson(7, 'rerank'), ...[...f].reverse()];
        }),
      ],
      KEY,
    );
    expect(seen).toEqual([[1, 5, 4]]);
    expect(found.map((l) => [l.id, l.how])).toEqual([
      [1, 'exact'],
      [7, 'rerank'],
      [4, 'lexical'],
    ]);
  });

  it('settle keeps the first place of a lesson found twice', () => {
    expect(settle([lesson(2, 'lexical'), lesson(3, 'exact'), lesson(2, 'exact')]).map((l) => [l.id, l.how])).toEqual([
      [3, 'exact'],
      [2, 'lexical'],
    ]);
  });

  it('LadderMemory cuts the query and gives at most 3', async () => {
    const keys: RecallKey[] = [];
    const memory = new LadderMemory([
      {
        name: 'all',
        climb: async (k) => {
          keys.push(k);
          return [1, 2, 3, 4, 5].map((id) => lesson(id, 'lexical'));
        },
      },
    ]);
    const found = await memory.recall({ ...KEY, query: 'q'.repeat(5000) });
    expect(found.map((l) => l.id)).toEqual([1, 2, 3]);
    expect(keys[0]?.query).toHaveLength(RECALL_QUERY_MAX);
  });

  it('a prompt lesson shows the signature and the lesson, or the note when there is none or the scope is none', () => {
    expect(promptLesson(lesson(1, 'exact'))).toEqual({ id: 1, seenBefore: 'sig 1', fix: 'lesson 1', how: 'exact' });
    expect(promptLesson(lesson(2, 'lexical', { lesson: null })).fix).toBe('note');
    expect(promptLesson(lesson(3, 'lexical', { scope: 'none' })).fix).toBe('note');
  });
});

describe("pg_trgm's formulas in JavaScript (the MemoryStore's)", () => {
  it('matches the values the pg_trgm documentation gives', () => {
    expect([...trigrams('cat')].sort()).toEqual(['  c', ' ca', 'at ', 'cat']);
    expect(similarity('word', 'two words')).toBeCloseTo(0.363636, 5);
    expect(wordSimilarity('word', 'two words')).toBeCloseTo(0.8, 5);
    expect(similarity('', 'x')).toBe(0);
    expect(wordSimilarity('abc', 'abc')).toBe(1);
  });
});
