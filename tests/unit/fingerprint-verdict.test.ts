import { describe, expect, it } from 'vitest';
import {
  type Fingerprint,
  fingerprintFailure,
  fingerprintPass,
  isStopping,
  type LoopEnd,
  type RulesMode,
  shouldFingerprint,
  stopsRun,
  type Verdict,
  VerdictStreak,
  verdictFor,
} from '../../core/fingerprint/index.js';

const TREE_A = 'a'.repeat(40);
const TREE_B = 'b'.repeat(40);

/** A failed loop's fingerprint from a log and a tree. */
const failed = (log: string, tree = TREE_A): Fingerprint => fingerprintFailure({ log, report: null, treeId: tree });
const passed = (tree = TREE_A): Fingerprint => fingerprintPass(tree);

const T1 = '--- FAIL: TestA\n--- FAIL: TestB\n';
const T1_OTHER_ORDER = '--- FAIL: TestB\n--- FAIL: TestA\n';
const T2 = '--- FAIL: TestA\n';
const T3 = '--- FAIL: TestC\n--- FAIL: TestD\n--- FAIL: TestE\n';
const E1 = 'AssertionError: BROKEN exists at 0x7f3a2b\n';
const E1_OTHER_RUN = 'AssertionError: BROKEN exists at 0x1\n';
const E2 = 'AssertionError: another thing\n';
const GENERIC = 'FAIL\n';
const SILENT = '';

describe('verdict rules', () => {
  it.each<[string, LoopEnd, Fingerprint | null, Fingerprint | null, boolean, Verdict]>([
    // blocked and agent_error are named for how the loop ended, whatever else is known
    ['blocked', 'blocked', null, null, false, 'blocked'],
    ['blocked with a baseline', 'blocked', failed(T1), null, true, 'blocked'],
    ['agent_error', 'agent_error', failed(T1), null, false, 'agent_error'],
    // green but nothing ticked: D only
    ['passed, no baseline', 'passed', null, passed(), false, 'first'],
    ['passed, same tree', 'passed', failed(T1), passed(TREE_A), false, 'no_change'],
    ['passed, same tree as a passed baseline', 'passed', passed(TREE_A), passed(TREE_A), false, 'no_change'],
    ['passed, other tree', 'passed', failed(T1), passed(TREE_B), false, 'other'],
    ['passed, empty tree is never unchanged', 'passed', passed(''), passed(''), false, 'other'],
    // failed: 1 deja_vu
    ['deja_vu needs no baseline', 'failed', null, failed(T1), true, 'deja_vu'],
    ['deja_vu beats repeat', 'failed', failed(T1), failed(T1), true, 'deja_vu'],
    ['deja_vu needs known tests', 'failed', null, failed(E1), true, 'first'],
    // 2 first
    ['first: no baseline', 'failed', null, failed(T1), false, 'first'],
    ['first: no baseline, unknown tests', 'failed', null, failed(SILENT), false, 'first'],
    // 3 repeat
    ['repeat: same tree, same tests', 'failed', failed(T1), failed(T1_OTHER_ORDER), false, 'repeat'],
    [
      'repeat: same tree, unknown tests, same specific error',
      'failed',
      failed(E1),
      failed(E1_OTHER_RUN),
      false,
      'repeat',
    ],
    // 4 no_change
    ['no_change: same tree, different tests', 'failed', failed(T1), failed(T2), false, 'no_change'],
    ['no_change: same tree, generic error only', 'failed', failed(GENERIC), failed(GENERIC), false, 'no_change'],
    ['no_change: same tree, nothing known', 'failed', failed(SILENT), failed(SILENT), false, 'no_change'],
    ['no_change: same tree as a passed baseline', 'failed', passed(TREE_A), failed(E1, TREE_A), false, 'no_change'],
    ['no_change: same tree, known now, unknown before', 'failed', failed(E1), failed(T1), false, 'no_change'],
    // 5 improving
    ['improving: fewer failing tests', 'failed', failed(T1, TREE_A), failed(T2, TREE_B), false, 'improving'],
    // 6 spinning
    ['spinning: same tests, other tree', 'failed', failed(T1, TREE_A), failed(T1, TREE_B), false, 'spinning'],
    [
      'spinning: unknown tests, same specific error',
      'failed',
      failed(E1, TREE_A),
      failed(E1, TREE_B),
      false,
      'spinning',
    ],
    // 7 other
    ['other: more failing tests', 'failed', failed(T2, TREE_A), failed(T1, TREE_B), false, 'other'],
    [
      'other: as many, different tests',
      'failed',
      failed(T1, TREE_A),
      failed('--- FAIL: X\n--- FAIL: Y\n', TREE_B),
      false,
      'other',
    ],
    ['other: unknown, different errors', 'failed', failed(E1, TREE_A), failed(E2, TREE_B), false, 'other'],
    ['other: unknown, same generic error', 'failed', failed(GENERIC, TREE_A), failed(GENERIC, TREE_B), false, 'other'],
    ['other: same error but tests known now', 'failed', failed(E1, TREE_A), failed(E1 + T1, TREE_B), false, 'other'],
    ['other: empty trees are never the same', 'failed', failed(SILENT, ''), failed(SILENT, ''), false, 'other'],
    [
      'other: tests now fewer than before but before unknown',
      'failed',
      failed(E1, TREE_A),
      failed(T3, TREE_B),
      false,
      'other',
    ],
  ])('%s', (_name, ended, baseline, current, openMatch, expected) => {
    expect(verdictFor({ ended: ended as Exclude<LoopEnd, 'progressed'>, baseline, current, openMatch })).toBe(expected);
  });

  it('stops only on deja_vu, repeat and no_change', () => {
    const stopping = ['deja_vu', 'repeat', 'no_change'];
    for (const v of [
      'first',
      'deja_vu',
      'repeat',
      'no_change',
      'improving',
      'spinning',
      'other',
      'blocked',
      'agent_error',
    ] as const) {
      expect(isStopping(v)).toBe(stopping.includes(v));
    }
    expect(isStopping(null)).toBe(false);
  });

  it.each<[RulesMode, Verdict, boolean]>([
    ['off', 'repeat', false],
    ['shadow', 'repeat', false],
    ['shadow', 'no_change', false],
    ['on', 'repeat', true],
    ['on', 'no_change', true],
    ['on', 'deja_vu', true],
    ['on', 'spinning', false],
    ['on', 'first', false],
    ['on', 'blocked', false],
  ])('CHALK_FP_RULES=%s with %s stops: %s', (mode, verdict, stop) => {
    expect(stopsRun(mode, verdict)).toBe(stop);
  });

  it('fingerprints only with rules not off and a finished agent', () => {
    expect(shouldFingerprint('off', true)).toBe(false);
    expect(shouldFingerprint('shadow', true)).toBe(true);
    expect(shouldFingerprint('on', true)).toBe(true);
    expect(shouldFingerprint('on', false)).toBe(false);
  });
});

describe('the streak baseline', () => {
  it('reproduces the shadow e2e: a rubric that names nothing, the same tree each time', () => {
    const streak = new VerdictStreak('shadow');
    const v = [1, 2, 3].map(() => streak.judge('failed', failed('', TREE_A)));
    expect(v.map((j) => j.verdict)).toEqual(['first', 'no_change', 'no_change']);
    expect(v.every((j) => !j.stop)).toBe(true);
  });

  it('reproduces the rules-on e2e: a JUnit report, the same failing change twice, stops at loop 2', () => {
    const report =
      '<testsuite><testcase classname="demo" name="no_marker"><failure message="AssertionError: BROKEN exists"/></testcase></testsuite>';
    const fp = () => fingerprintFailure({ log: 'AssertionError: BROKEN exists\n', report, treeId: TREE_A });
    const streak = new VerdictStreak('on');
    expect(streak.judge('failed', fp())).toMatchObject({ verdict: 'first', stop: false });
    expect(streak.judge('failed', fp())).toMatchObject({ verdict: 'repeat', stop: true });
  });

  it('moves the baseline on failed and passed loops only, and gives the previous one back', () => {
    const streak = new VerdictStreak('shadow');
    const a = failed(T1, TREE_A);
    expect(streak.judge('failed', a)).toMatchObject({ verdict: 'first', previous: null });
    expect(streak.baseline).toMatchObject({ treeId: TREE_A, verdict: 'first' });

    // blocked and agent_error loops are judged but never become the baseline
    expect(streak.judge('agent_error', null).verdict).toBe('agent_error');
    expect(streak.judge('blocked', null).verdict).toBe('blocked');
    expect(streak.baseline?.treeId).toBe(TREE_A);

    const b = failed(T1, TREE_B);
    const j = streak.judge('failed', b);
    expect(j.verdict).toBe('spinning');
    expect(j.previous).toMatchObject({ treeId: TREE_A, verdict: 'first' });
    expect(streak.baseline).toMatchObject({ treeId: TREE_B, verdict: 'spinning' });

    // a green loop that ticked nothing becomes the baseline too (D only)
    expect(streak.judge('passed', passed(TREE_B)).verdict).toBe('no_change');
    expect(streak.baseline?.rubric).toBe('passed');
  });

  it('clears the baseline on progress, so the next failure is first again', () => {
    const streak = new VerdictStreak('on');
    streak.judge('failed', failed(T1));
    expect(streak.judge('progressed', null)).toEqual({ verdict: null, previous: expect.anything(), stop: false });
    expect(streak.baseline).toBeNull();
    expect(streak.judge('failed', failed(T1)).verdict).toBe('first');
  });

  it('computes nothing under off', () => {
    const streak = new VerdictStreak('off');
    expect(streak.judge('failed', failed(T1))).toEqual({ verdict: null, previous: null, stop: false });
    expect(streak.judge('failed', failed(T1))).toEqual({ verdict: null, previous: null, stop: false });
    expect(streak.judge('blocked', null).verdict).toBeNull();
    expect(streak.baseline).toBeNull();
  });

  it('stops on deja_vu at loop 1 under on, and only records it under shadow', () => {
    expect(new VerdictStreak('on').judge('failed', failed(T1), true)).toMatchObject({ verdict: 'deja_vu', stop: true });
    expect(new VerdictStreak('shadow').judge('failed', failed(T1), true)).toMatchObject({
      verdict: 'deja_vu',
      stop: false,
    });
  });
});
