import { describe, expect, it } from 'vitest';
import { LoopBudget } from '../../core/decision/budget.js';
import type { Calibration } from '../../core/decision/calibration.js';
import {
  applyRerank,
  RERANK_FAILURE_MAX,
  RERANK_MAX,
  RERANK_REQUEST_MAX,
  rerankCandidates,
  rerankId,
  rerankRequest,
  rerankRequestChars,
} from '../../core/decision/rerank.js';
import { actGate, type StuckPolicy, stuckOutcome } from '../../core/decision/stuck.js';
import { plainLadder, semanticSkip } from '../../core/memory/decider-rungs.js';
import type { RecalledLesson } from '../../core/ports/store.js';

const lesson = (id: number, how: RecalledLesson['how'], over: Partial<RecalledLesson> = {}): RecalledLesson => ({
  id,
  repo: 'shop',
  ticket: 'T-1',
  signature: `sig ${id}`,
  resolution: `note ${id}`,
  lesson: `lesson ${id}`,
  resolvedBy: 'me',
  createdAt: new Date(0),
  resolvedAt: new Date(0),
  runId: null,
  fingerprint: null,
  firstError: `E${id}`,
  scope: 'repo',
  forgottenAt: null,
  similarity: 0.5,
  cosine: null,
  how,
  ...over,
});
const noul = (p: number) => ({ type: 'noul' as const, noul: p });

describe('the rerank candidates', () => {
  it('keeps exact lessons aside (never sent), then lexical before semantic, each once, at most 5', () => {
    const found = [
      lesson(1, 'exact'),
      lesson(9, 'semantic'),
      lesson(2, 'lexical'),
      lesson(3, 'lexical'),
      lesson(2, 'semantic'),
      lesson(1, 'semantic'),
      lesson(8, 'semantic'),
      lesson(7, 'semantic'),
      lesson(6, 'semantic'),
    ];
    const { exact, sent } = rerankCandidates(found);
    expect(exact.map((l) => l.id)).toEqual([1]);
    expect(sent.map((l) => [l.id, l.how])).toEqual([
      [2, 'lexical'],
      [3, 'lexical'],
      [9, 'semantic'],
      [8, 'semantic'],
      [7, 'semantic'],
    ]);
    expect(sent).toHaveLength(RERANK_MAX);
  });
});

describe('the rerank request', () => {
  it('asks one noul per lesson, keyed lesson_<id>, about the failure and each lesson', () => {
    const r = rerankRequest({ failure: 'TypeError: x is undefined\nt::a', lessons: [lesson(4, 'lexical')] });
    expect(r).not.toBeNull();
    expect(Object.keys(r?.questions ?? {})).toEqual(['lesson_4']);
    expect(r?.questions.lesson_4?.type).toBe('noul');
    expect(r?.state).toContain('current failure:\nTypeError: x is undefined t::a');
    expect(r?.state).toContain('lesson 4:\n  failure: E4\n  fix: lesson 4');
    expect(rerankRequest({ failure: 'x', lessons: [] })).toBeNull();
  });

  it('stays within 4,000 characters: the failure at most 1,500, the rest shared equally by the lessons', () => {
    const long = (c: string) => c.repeat(5_000);
    const lessons = [1, 2, 3, 4, 5].map((id) =>
      lesson(id, 'lexical', { firstError: long(String(id)), lesson: long('f') }),
    );
    const r = rerankRequest({ failure: long('x'), lessons });
    if (!r) throw new Error('no request');
    expect(rerankRequestChars(r)).toBeLessThanOrEqual(RERANK_REQUEST_MAX);
    expect(rerankRequestChars(r)).toBeGreaterThan(RERANK_REQUEST_MAX - 20);
    const failure = /current failure:\n(x+\.\.\.)\n/.exec(r.state)?.[1] ?? '';
    expect(failure.length).toBe(RERANK_FAILURE_MAX);
    const parts = [...r.state.matchAll(/ {2}(failure|fix): (\S+)/g)].map((m) => m[2]?.length);
    expect(parts).toHaveLength(10);
    expect(new Set(parts).size).toBe(1);
    // A sixth lesson is never asked about.
    const six = rerankRequest({ failure: 'x', lessons: [...lessons, lesson(6, 'semantic')] });
    expect(Object.keys(six?.questions ?? {})).toHaveLength(RERANK_MAX);
  });

  it('names a lesson without a first error by its signature, and without a rule by the note', () => {
    const r = rerankRequest({
      failure: 'boom',
      lessons: [lesson(5, 'lexical', { firstError: null, lesson: null, signature: 'rubric  failed\n\n(exit 1)' })],
    });
    expect(r?.state).toContain('failure: rubric failed (exit 1)\n  fix: note 5');
  });
});

describe('applying the rerank answers', () => {
  const exact = [lesson(1, 'exact')];
  const sent = [lesson(2, 'lexical'), lesson(3, 'semantic'), lesson(4, 'lexical')];
  it('keeps exact lessons, then confident yes answers, most confident first, marked rerank', () => {
    const kept = applyRerank({
      exact,
      sent,
      answers: { [rerankId(2)]: noul(0.92), [rerankId(3)]: noul(0.99), [rerankId(4)]: noul(0.7) },
      threshold: 0.9,
    });
    expect(kept?.map((l) => [l.id, l.how])).toEqual([
      [1, 'exact'],
      [3, 'rerank'],
      [2, 'rerank'],
    ]);
  });

  it('drops a confident no and an unsure answer; keeps only exact when nothing is confirmed', () => {
    const kept = applyRerank({
      exact,
      sent,
      answers: { [rerankId(2)]: noul(0.02), [rerankId(3)]: noul(0.6) },
      threshold: 0.9,
    });
    expect(kept?.map((l) => l.id)).toEqual([1]);
  });

  it('is null (the plain ladder) without an answer, or with none readable', () => {
    expect(applyRerank({ exact, sent, answers: null, threshold: 0.9 })).toBeNull();
    expect(applyRerank({ exact, sent, answers: {}, threshold: 0.9 })).toBeNull();
  });

  it('the plain ladder is what exact and lexical found', () => {
    expect(plainLadder([lesson(1, 'exact'), lesson(9, 'semantic'), lesson(2, 'lexical')]).map((l) => l.id)).toEqual([
      1, 2,
    ]);
  });
});

describe('the semantic gate', () => {
  const budget = new LoopBudget({ now: () => 0 });
  const base = {
    mode: 'shadow',
    gate: { vector: true, resolved: 30 },
    minLessons: 30,
    embedder: true,
    budget,
    query: 'TypeError',
  };
  it('embeds only with the decider on or shadow, enough lessons, pgvector, an embedder and time left', () => {
    expect(semanticSkip(base)).toBeNull();
    expect(semanticSkip({ ...base, mode: 'on' })).toBeNull();
    expect(semanticSkip({ ...base, mode: 'off' })).toBe('the decider is off');
    expect(semanticSkip({ ...base, gate: { vector: true, resolved: 29 } })).toMatch(/29 resolved lessons/);
    expect(semanticSkip({ ...base, gate: { vector: false, resolved: 30 } })).toMatch(/no pgvector/);
    expect(semanticSkip({ ...base, gate: null })).toMatch(/could not be counted/);
    expect(semanticSkip({ ...base, embedder: false })).toMatch(/no plugin provides an embedder/);
    expect(semanticSkip({ ...base, budget: undefined })).toMatch(/no host-service budget/);
    expect(semanticSkip({ ...base, query: '  ' })).toBe('nothing to embed');
  });

  it('starts nothing with under 50 ms of the loop budget left', () => {
    let now = 0;
    const b = new LoopBudget({ now: () => now });
    b.deadline();
    now = 1_951;
    expect(semanticSkip({ ...base, budget: b })).toMatch(/no host-service time left/);
  });
});

describe('the loop budget', () => {
  it('is shared by the recall and the stuck question, its clock paused while the agent works', () => {
    let now = 1_000;
    const b = new LoopBudget({ now: () => now });
    expect(b.deadline()).toBe(3_000);
    now = 1_300; // the recall's embedding and rerank took 300 ms
    b.pause();
    now = 600_000; // ten minutes of agent and rubric
    expect(b.left()).toBe(1_700);
    expect(b.deadline()).toBe(601_700);
    now = 601_700;
    expect(b.left()).toBe(0);
  });
});

describe('the act gate (stuck and rerank)', () => {
  const passes: Calibration = {
    url: 'http://d',
    model: 'm',
    threshold: 0.9,
    suggested: null,
    correct: 20,
    falseStops: 0,
    waiting: 0,
    judged: 20,
    passes: true,
  };
  const policy: StuckPolicy = { mode: 'on', threshold: 0.9, calibration: () => passes, anyCalibrated: true };
  it('acts under on and calibrated; a provider hold records shadow and says why', () => {
    expect(actGate({ model: 'm', answered: true }, policy)).toEqual({ recordedMode: 'on', may: true, held: null });
    const held = { ...policy, hold: 'the local decider answers in 1200 ms' };
    expect(actGate({ model: 'm', answered: true }, held)).toEqual({
      recordedMode: 'shadow',
      may: false,
      held: 'the local decider answers in 1200 ms',
    });
    expect(actGate(null, held).recordedMode).toBe('shadow');
    expect(stuckOutcome({ answer: noul(0.99), model: 'm' }, held).act).toBe(false);
    expect(stuckOutcome({ answer: noul(0.99), model: 'm' }, policy).act).toBe(true);
    expect(actGate({ model: 'm', answered: true }, { ...policy, mode: 'shadow' }).may).toBe(false);
  });
});
