import { describe, expect, it } from 'vitest';
import { Decision, readNoul } from '../../core/decision/reading.js';
import { decodeResponse, encodeRequest } from '../../core/protocol/codec.js';
import { DecisionFailure } from '../../core/protocol/failure.js';
import {
  CHALK_MAX_QUESTIONS,
  choice,
  type DecisionRequest,
  decisionRequest,
  noul,
  score,
} from '../../core/protocol/questions.js';

const CANARY = 'STATE-CANARY-7f3a';
const request = (): DecisionRequest =>
  decisionRequest(`failing: ${CANARY}`, {
    stuck: noul('Is the agent stuck?', { true: 'same root cause', false: 'a new cause' }),
    plain: noul('Does a test fail?'),
    kind: choice('Which kind?', { billing: 'about money', technical: 'about code' }),
    effort: score('How hard?', ['trivial', 'small', 'large']),
  });

function refusal(body: unknown, req = request()): DecisionFailure {
  try {
    decodeResponse(typeof body === 'string' ? body : JSON.stringify(body), req);
  } catch (err) {
    expect(err).toBeInstanceOf(DecisionFailure);
    expect((err as Error).message).not.toContain(CANARY);
    return err as DecisionFailure;
  }
  throw new Error('expected a refusal');
}

const good = {
  model: 'strands-decider-2B-v19',
  answers: {
    stuck: { type: 'noul', noul: 0.96 },
    plain: { type: 'noul', noul: 0.02 },
    kind: { type: 'choice', choice: 'technical', confidence: 0.8, probabilities: { billing: 0.13, technical: 0.87 } },
    effort: { type: 'score', score: 1.04, confidence: 0.94, legend: { x: 1 }, probabilities: { '0': 0, '1': 0.96 } },
  },
};

describe('the v1 request', () => {
  it('encodes protocol 1, the state as text and every question in the order asked', () => {
    const body = JSON.parse(encodeRequest(request()));
    expect(body.protocol).toBe(1);
    expect(body.state).toBe(`failing: ${CANARY}`);
    expect(Object.keys(body.questions)).toEqual(['stuck', 'plain', 'kind', 'effort']);
    expect(body.questions.stuck).toEqual({
      type: 'noul',
      instructions: 'Is the agent stuck?',
      criteria: { true: 'same root cause', false: 'a new cause' },
    });
    expect(body.questions.plain).toEqual({ type: 'noul', instructions: 'Does a test fail?' });
    expect(Object.keys(body.questions.kind.criteria)).toEqual(['billing', 'technical']);
    expect(body.questions.effort.criteria).toEqual(['trivial', 'small', 'large']);
    expect(Object.keys(body).sort()).toEqual(['protocol', 'questions', 'state']);
  });

  it('refuses an empty state, no questions, a blank or numeric id, and too many questions', () => {
    expect(() => decisionRequest('', { q: noul('x?') })).toThrow(/state must not be empty/);
    expect(() => decisionRequest('  ', { q: noul('x?') })).toThrow(/state must not be empty/);
    expect(() => decisionRequest('s', {})).toThrow(/at least one question/);
    expect(() => decisionRequest('s', { ' ': noul('x?') })).toThrow(/id must not be blank/);
    expect(() => decisionRequest('s', { '3': noul('x?') })).toThrow(/bare number/);
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`q${i}`, noul('x?')]));
    expect(() => decisionRequest('s', nine, { maxQuestions: CHALK_MAX_QUESTIONS })).toThrow(
      /at most 8 questions \(got 9\)/,
    );
    expect(Object.keys(decisionRequest('s', nine).questions)).toHaveLength(9);
  });

  it('refuses malformed questions', () => {
    expect(() => choice('x?', { only: 'one' })).toThrow(/at least 2 options/);
    expect(() => choice('x?', { a: '', ' ': '' })).toThrow(/option key must not be blank/);
    expect(() => noul(' ')).toThrow(/instructions must not be blank/);
    expect(() => score('x?', ['one'])).toThrow(/at least 2 levels/);
    expect(() =>
      score(
        'x?',
        Array.from({ length: 11 }, (_, i) => `l${i}`),
      ),
    ).toThrow(/at most 10 levels/);
    expect(() => score('x?', ['a', ' '])).toThrow(/level must not be blank/);
    expect(() => noul('x?', { true: 'yes', false: '' })).toThrow(/criteria.false/);
  });
});

describe('the v1 response', () => {
  it('decodes answers in the order asked, ignoring unknown fields and unasked answers', () => {
    const r = decodeResponse(
      JSON.stringify({
        ...good,
        protocol: 1,
        latency_ms: 141.2,
        extra: { anything: true },
        usage: { input_tokens: 426, output_tokens: 0 },
        answers: { ...good.answers, unasked: { type: 'noul', noul: 0.5 } },
      }),
      request(),
    );
    expect(Object.keys(r.answers)).toEqual(['stuck', 'plain', 'kind', 'effort']);
    expect(r.model).toBe('strands-decider-2B-v19');
    expect(r.inputTokens).toBe(426);
    expect(r.answers.effort).toEqual({
      type: 'score',
      score: 1.04,
      confidence: 0.94,
      probabilities: { '0': 0, '1': 0.96 },
    });
  });

  it('reads a missing protocol as 1 and a body without usage', () => {
    const r = decodeResponse(JSON.stringify(good), request());
    expect(r.protocol).toBe(1);
    expect(r.inputTokens).toBeNull();
  });

  it('is a version failure naming both versions when the protocol is not 1', () => {
    const f = refusal({ ...good, protocol: 2 });
    expect(f.kind).toBe('version');
    expect(f.message).toMatch(/protocol 2.*speaks 1/);
    expect(f.retryable).toBe(false);
  });

  it.each([
    ['not JSON', '<html>oops</html>', /not JSON/],
    ['not an object', '[1,2]', /not a JSON object/],
    ['no answers', { model: 'm' }, /no answers object/],
    ['no model', { answers: {} }, /names no model/],
    ['a noul as a string', { model: 'm', answers: { stuck: { type: 'noul', noul: '0.9' } } }, /'stuck' is not one/],
    [
      'a probability of 1.5',
      { model: 'm', answers: { stuck: { type: 'noul', noul: 1.5 } } },
      /'stuck'.*between 0 and 1, got 1.5/,
    ],
    ['a negative probability', { model: 'm', answers: { plain: { noul: -0.1 } } }, /'plain'.*between 0 and 1/],
    [
      'a choice not among the options',
      { model: 'm', answers: { kind: { type: 'choice', choice: 'legal', confidence: 0.9 } } },
      /'kind' picks 'legal', not among/,
    ],
    [
      'a missing choice confidence',
      { model: 'm', answers: { kind: { type: 'choice', choice: 'billing' } } },
      /'kind'.*confidence/,
    ],
    [
      'a choice confidence of 1.5',
      { model: 'm', answers: { kind: { type: 'choice', choice: 'billing', confidence: 1.5 } } },
      /'kind'.*got 1.5/,
    ],
    ['a missing choice', { model: 'm', answers: { kind: { type: 'choice', confidence: 0.9 } } }, /'kind'.*choice/],
    [
      'an option probability out of range',
      {
        model: 'm',
        answers: { kind: { type: 'choice', choice: 'billing', confidence: 0.9, probabilities: { billing: 2 } } },
      },
      /'kind'.*probabilities/,
    ],
    ['a missing score', { model: 'm', answers: { effort: { type: 'score', confidence: 0.9 } } }, /'effort'.*score/],
    [
      'a missing score confidence',
      { model: 'm', answers: { effort: { type: 'score', score: 1 } } },
      /'effort'.*confidence/,
    ],
    [
      'a score off the scale',
      { model: 'm', answers: { effort: { type: 'score', score: 3, confidence: 0.9 } } },
      /'effort' scores 3, off the scale 0 to 2/,
    ],
    [
      'an answer of the wrong type',
      { model: 'm', answers: { stuck: { type: 'choice', choice: 'a', confidence: 1 } } },
      /'stuck' is a choice, but 'stuck' was asked as a noul/,
    ],
    ['an answer that is not an object', { model: 'm', answers: { stuck: 0.9 } }, /'stuck' is not an object/],
  ])('refuses %s by name', (_what, body, pattern) => {
    const f = refusal(body);
    expect(f.kind).toBe('invalid');
    expect(f.message).toMatch(pattern);
  });
});

describe('reading answers', () => {
  const decision = () => new Decision(request(), decodeResponse(JSON.stringify(good), request()), null, 12);

  it('reads noul as yes at >= 0.5 with confidence max(p, 1-p)', () => {
    expect(decision().noul('stuck')).toEqual({ answer: 'yes', confidence: 0.96, p: 0.96 });
    expect(decision().noul('plain')).toEqual({ answer: 'no', confidence: 0.98, p: 0.02 });
    expect(readNoul({ type: 'noul', noul: 0.5 })).toMatchObject({ answer: 'yes', confidence: 0.5 });
  });

  it('carries the confidence of choice and score answers', () => {
    expect(decision().choice('kind')).toMatchObject({ answer: 'technical', known: true, confidence: 0.8 });
    expect(decision().score('effort')).toEqual({ answer: 1.04, known: true, confidence: 0.94 });
  });

  it('reads an answer below the caller threshold as unknown', () => {
    expect(decision().noul('stuck', 0.97)).toMatchObject({ answer: 'unknown', confidence: 0.96 });
    expect(decision().noul('stuck', 0.96).answer).toBe('yes');
    expect(decision().choice('kind', 0.9)).toMatchObject({ answer: null, known: false, confidence: 0.8 });
    expect(decision().score('effort', 0.95)).toMatchObject({ answer: null, known: false });
  });

  it('reads a missing key as unknown', () => {
    const body = { model: 'm', answers: { stuck: { type: 'noul', noul: 0.9 } } };
    const d = new Decision(request(), decodeResponse(JSON.stringify(body), request()), null, 1);
    expect(d.noul('plain')).toEqual({ answer: 'unknown', confidence: null, p: null });
    expect(d.choice('kind').known).toBe(false);
    expect(d.score('effort').known).toBe(false);
  });

  it('refuses an id never asked, naming it and what was asked', () => {
    expect(() => decision().noul('nope')).toThrow(
      "No question was asked under 'nope'; asked: [stuck, plain, kind, effort]",
    );
  });

  it('refuses an id read as another type, naming the id and its type', () => {
    expect(() => decision().score('kind')).toThrow("'kind' was asked as a choice, read it as that");
    expect(() => decision().noul('effort')).toThrow("'effort' was asked as a score");
  });

  it('says a failed call answered nothing, and why', () => {
    const d = new Decision(
      request(),
      null,
      new DecisionFailure('unreachable', 'could not be reached (ECONNREFUSED)'),
      3,
    );
    expect(d.ok).toBe(false);
    expect(() => d.noul('stuck')).toThrow(/answered nothing: unreachable: could not be reached/);
  });
});
