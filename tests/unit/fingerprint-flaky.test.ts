import { describe, expect, it } from 'vitest';
import { judgeFlaky, shouldRerun } from '../../core/fingerprint/flaky.js';
import { fingerprintFailure } from '../../core/fingerprint/index.js';

const TREE = 'a'.repeat(40);
const failed = (...lines: string[]) => ({ exitCode: 1, log: `${lines.join('\n')}\n`, report: null });
const passed = { exitCode: 0, log: '3 passed in 0.02s\n', report: null };
const A = 'FAILED t.py::test_a - AssertionError: a is wrong';
const B = 'FAILED t.py::test_b - KeyError: b';
const C = 'FAILED t.py::test_c - ValueError: c';

const judge = (first: ReturnType<typeof failed>, second: typeof passed | ReturnType<typeof failed>) =>
  judgeFlaky(fingerprintFailure({ ...first, treeId: TREE }), { first, second });

describe('flaky tests: judging two runs of one tree', () => {
  it('all failures pass the second time: all flaky, nothing identifies the loop', () => {
    const j = judge(failed(A, B), passed);
    expect(j.flaky).toEqual(['t.py::test_a', 't.py::test_b']);
    expect(j.fingerprint).toMatchObject({ rubric: 'failed', tests: null, firstError: '', hash: null, treeId: TREE });
  });

  it('a stable failure keeps its tests; E comes from the run that failed exactly those', () => {
    const j = judge(failed(B, A), failed(A));
    expect(j.flaky).toEqual(['t.py::test_b']);
    expect(j.fingerprint.tests).toEqual(['t.py::test_a']);
    expect(j.fingerprint.firstError).toBe(A);
    // The same as a run that only ever failed test_a.
    expect(j.fingerprint.hash).toBe(fingerprintFailure({ ...failed(A), treeId: TREE }).hash);
  });

  it('a test that passed the first run and failed the second is flaky too', () => {
    const j = judge(failed(A), failed(A, C));
    expect(j.flaky).toEqual(['t.py::test_c']);
    expect(j.fingerprint.tests).toEqual(['t.py::test_a']);
    expect(j.fingerprint.firstError).toBe(A);
  });

  it('flaky on both sides: the stable tests stay, no run failed exactly them, so no E', () => {
    const j = judge(failed(B, A), failed(A, C));
    expect(j.flaky).toEqual(['t.py::test_b', 't.py::test_c']);
    expect(j.fingerprint.tests).toEqual(['t.py::test_a']);
    expect(j.fingerprint.firstError).toBe('');
    expect(j.fingerprint.hash).not.toBeNull();
  });

  it('the same failures twice: nothing flaky, the first fingerprint unchanged', () => {
    const first = failed(A, B);
    const fp = fingerprintFailure({ ...first, treeId: TREE });
    const j = judgeFlaky(fp, { first, second: failed(B, A) });
    expect(j.flaky).toEqual([]);
    expect(j.fingerprint).toBe(fp);
  });

  it('a second run that fails naming no test judges nothing flaky', () => {
    const j = judge(failed(A), { exitCode: 2, log: 'Segmentation fault\n', report: null });
    expect(j.flaky).toEqual([]);
    expect(j.fingerprint.tests).toEqual(['t.py::test_a']);
  });

  it('runs again only for a failed rubric with known tests, not after a timeout or the output cap, never when off', () => {
    const known = fingerprintFailure({ ...failed(A), treeId: TREE });
    const unknown = fingerprintFailure({ log: 'boom\n', report: null, treeId: TREE });
    const ok = { capped: false, timedOut: false };
    expect(shouldRerun('auto', known, ok)).toBe(true);
    expect(shouldRerun('off', known, ok)).toBe(false);
    expect(shouldRerun('auto', unknown, ok)).toBe(false);
    expect(shouldRerun('auto', null, ok)).toBe(false);
    expect(shouldRerun('auto', known, { capped: true, timedOut: false })).toBe(false);
    expect(shouldRerun('auto', known, { capped: false, timedOut: true })).toBe(false);
  });
});
