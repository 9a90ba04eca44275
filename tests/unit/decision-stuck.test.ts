import { describe, expect, it } from 'vitest';
import { LoopBudget } from '../../core/decision/budget.js';
import { type Calibration, calibrationOf, GATE, judgeStuck } from '../../core/decision/calibration.js';
import {
  asksStuck,
  diffstatTail,
  isTreeId,
  STUCK_STATE_MAX,
  stuckOutcome,
  stuckState,
} from '../../core/decision/stuck.js';
import type { StuckAnswerFacts } from '../../core/ports/store.js';

describe('when the stuck question is asked', () => {
  it('only after a failed loop judged spinning or other, never with the rules off', () => {
    expect(asksStuck({ verdict: 'spinning', ended: 'failed', rulesMode: 'shadow' })).toBe(true);
    expect(asksStuck({ verdict: 'other', ended: 'failed', rulesMode: 'on' })).toBe(true);
    expect(asksStuck({ verdict: 'other', ended: 'failed', rulesMode: 'off' })).toBe(false);
    expect(asksStuck({ verdict: 'other', ended: 'passed', rulesMode: 'shadow' })).toBe(false);
    for (const verdict of ['first', 'repeat', 'no_change', 'improving', 'deja_vu', 'blocked', 'agent_error']) {
      expect(asksStuck({ verdict, ended: 'failed', rulesMode: 'shadow' })).toBe(false);
    }
  });
});

describe("the stuck question's state", () => {
  it('holds both loops failing tests and first errors, then the diffstat, and nothing more', () => {
    const text = stuckState({
      previous: { failingTests: ['tests::a', 'tests::b'], firstError: 'AssertionError: 1 != 2', testsKnown: true },
      current: { failingTests: [], firstError: null, testsKnown: false },
      diffstat: ' greet.sh | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n',
    });
    expect(text).toBe(
      [
        'previous loop:',
        '  failing tests (2): tests::a, tests::b',
        '  first error: AssertionError: 1 != 2',
        'current loop:',
        '  failing tests: unknown',
        '  first error: none found',
        'changes between the two loops (git diff --stat):',
        ' greet.sh | 2 +-',
        ' 1 file changed, 1 insertion(+), 1 deletion(-)',
      ].join('\n'),
    );
  });

  it('lists at most 20 tests, keeps the last 41 diffstat lines, and is capped at 6,000 characters', () => {
    const tests = Array.from({ length: 25 }, (_, i) => `t${i}`);
    const text = stuckState({
      previous: { failingTests: tests, firstError: 'E' },
      current: { failingTests: tests, firstError: `${'x'.repeat(10_000)}` },
      diffstat: Array.from({ length: 100 }, (_, i) => ` file${i} | 1 +`).join('\n'),
    });
    expect(text).toContain(`failing tests (25): ${tests.slice(0, 20).join(', ')}, ...`);
    expect(text).not.toContain('t20');
    expect(text.length).toBeLessThanOrEqual(STUCK_STATE_MAX);
    expect(text).not.toContain('file58 ');
    expect(text).toContain('file59 | 1 +');
    expect(text).toContain('file99 | 1 +');
    const huge = stuckState({
      previous: { failingTests: Array.from({ length: 20 }, () => 'y'.repeat(1_000)), firstError: 'E' },
      current: { failingTests: Array.from({ length: 20 }, () => 'z'.repeat(1_000)), firstError: 'E' },
      diffstat: Array.from({ length: 41 }, () => 'w'.repeat(1_000)).join('\n'),
    });
    expect(huge.length).toBe(STUCK_STATE_MAX);
  });

  it('says so when the diffstat is unknown or empty', () => {
    expect(stuckState({ diffstat: null })).toMatch(/\(git diff --stat\):\n {2}none, or unknown$/);
    expect(diffstatTail('\n\n')).toBeNull();
  });

  it('splices only hex tree ids into the diffstat command', () => {
    expect(isTreeId('a'.repeat(40))).toBe(true);
    expect(isTreeId('b'.repeat(64))).toBe(true);
    expect(isTreeId(`${'a'.repeat(39)};`)).toBe(false);
    expect(isTreeId('$(touch /tmp/x)')).toBe(false);
    expect(isTreeId(null)).toBe(false);
  });
});

const gate = (passes: boolean): Calibration => ({
  url: 'http://127.0.0.1:8471',
  model: 'm@1',
  threshold: 0.9,
  suggested: null,
  correct: passes ? 20 : 3,
  falseStops: 0,
  waiting: 0,
  judged: passes ? 20 : 3,
  passes,
});
const yes = (p: number) => ({ answer: { type: 'noul' as const, noul: p }, model: 'm@1' });

describe('what a stuck answer does', () => {
  const on = (passes: boolean | null) => ({
    mode: 'on' as const,
    threshold: 0.9,
    calibration: () => (passes === null ? null : gate(passes)),
    anyCalibrated: passes === true,
  });

  it('in shadow: nothing, whatever the answer', () => {
    const policy = { mode: 'shadow' as const, threshold: 0.9, calibration: () => gate(true), anyCalibrated: true };
    expect(stuckOutcome(yes(0.99), policy)).toEqual({
      recordedMode: 'shadow',
      act: false,
      confidence: 0.99,
      held: null,
    });
  });

  it('in on and calibrated: a yes at or above the threshold acts; below it, or a no, does not', () => {
    expect(stuckOutcome(yes(0.9), on(true))).toMatchObject({ recordedMode: 'on', act: true });
    expect(stuckOutcome(yes(0.89), on(true))).toMatchObject({ recordedMode: 'on', act: false });
    expect(stuckOutcome(yes(0.02), on(true))).toMatchObject({ recordedMode: 'on', act: false, confidence: 0.98 });
  });

  it('in on, uncalibrated or unknown: recorded as shadow, and says why', () => {
    const held = stuckOutcome(yes(0.99), on(false));
    expect(held).toMatchObject({ recordedMode: 'shadow', act: false });
    expect(held.held).toMatch(/m@1 at http:\/\/127\.0\.0\.1:8471 is not calibrated yet: 3 judged/);
    expect(stuckOutcome(yes(0.99), on(null)).held).toMatch(/unknown/);
  });

  it('a call with no answer, or a missing key, acts on nothing and is not the reason for the warning', () => {
    expect(stuckOutcome(null, on(false))).toEqual({ recordedMode: 'shadow', act: false, confidence: null, held: null });
    expect(stuckOutcome(null, on(true))).toMatchObject({ recordedMode: 'on', act: false });
    expect(stuckOutcome({ answer: undefined, model: 'm@1' }, on(false))).toMatchObject({ act: false, held: null });
  });
});

const fact = (over: Partial<StuckAnswerFacts>): StuckAnswerFacts => ({
  url: 'http://127.0.0.1:8471/',
  model: 'm@1',
  run: 'r',
  mode: 'shadow',
  answer: 'yes',
  confidence: 0.95,
  laterProgress: false,
  detained: true,
  ...over,
});

describe('the judgement of a stuck answer (one rule, read at read time)', () => {
  it('a yes is right when the run was detained with no later progress, wrong after progress, else waiting', () => {
    expect(judgeStuck(fact({}))).toBe('right');
    expect(judgeStuck(fact({ laterProgress: true }))).toBe('wrong');
    expect(judgeStuck(fact({ laterProgress: true, detained: false }))).toBe('wrong');
    expect(judgeStuck(fact({ detained: false }))).toBe('waiting');
  });

  it('a no is the mirror image', () => {
    expect(judgeStuck(fact({ answer: 'no', laterProgress: true }))).toBe('right');
    expect(judgeStuck(fact({ answer: 'no' }))).toBe('wrong');
    expect(judgeStuck(fact({ answer: 'no', detained: false }))).toBe('waiting');
  });

  it("one decider's gate: URLs compared without a trailing slash, other models and URLs left out", () => {
    const answers = [
      ...Array.from({ length: 19 }, (_, i) => fact({ run: `a${i}` })),
      fact({ run: 'b', url: 'http://127.0.0.1:8471' }),
      fact({ run: 'c', model: 'm@2' }),
      fact({ run: 'd', url: 'http://127.0.0.1:9999/' }),
    ];
    const c = calibrationOf(answers, { url: 'http://127.0.0.1:8471', model: 'm@1', threshold: 0.9 });
    expect(c).toMatchObject({ judged: GATE.minJudged, correct: 20, passes: true, url: 'http://127.0.0.1:8471' });
    expect(calibrationOf(answers, { url: 'http://127.0.0.1:8471/', model: 'm@2', threshold: 0.9 })).toMatchObject({
      judged: 1,
      passes: false,
    });
  });
});

describe("a loop's host-service budget", () => {
  it('starts at its first call, shares 2 seconds among every call, and never goes negative', () => {
    let now = 1_000;
    const b = new LoopBudget({ now: () => now });
    expect(b.left()).toBe(2_000);
    now = 50_000; // the agent's minutes before the first call do not count
    expect(b.deadline()).toBe(52_000);
    now += 1_200;
    expect(b.left()).toBe(800);
    expect(b.deadline()).toBe(52_000);
    now += 5_000;
    expect(b.left()).toBe(0);
    expect(b.minCallMs).toBe(50);
  });
});
