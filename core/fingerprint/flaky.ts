import { type Fingerprint, failedFingerprint, failingTests, sortTests } from './fingerprint.js';
import type { LogInput } from './log.js';
import { firstError } from './read.js';

/**
 * Flaky tests: after a failed rubric whose failing tests are known, the rubric
 * runs once more on the same tree (`CHALK_RERUN_FAILED=auto`). A test that
 * failed one run and passed the other is flaky: it is recorded, and left out
 * of the fingerprint, so it neither makes a verdict `repeat` (or `spinning`)
 * nor reaches a lesson.
 */

/** `CHALK_RERUN_FAILED`. */
export type RerunMode = 'auto' | 'off';

/**
 * Whether a failed rubric is run again: only when its fingerprint names the
 * failing tests (the loop is then judged by them), and not after a timeout or
 * the output cap (a second run would cost as much again and read no better).
 */
export function shouldRerun(
  mode: RerunMode,
  fp: Fingerprint | null,
  o: { capped: boolean; timedOut: boolean },
): boolean {
  return mode === 'auto' && fp?.rubric === 'failed' && fp.tests !== null && !o.capped && !o.timedOut;
}

/** One rubric run as the fingerprint reads it. */
export interface RubricOutput {
  exitCode: number;
  log: LogInput;
  report: string | null;
}

export interface FlakyJudgement {
  /** Tests that failed one run and passed the other, sorted; [] when none. */
  flaky: string[];
  /** The first run's fingerprint without them. */
  fingerprint: Fingerprint;
}

/**
 * Compares the two runs of one tree. When the second run fails naming no test
 * it can read, no test is judged flaky. Otherwise the fingerprint keeps the
 * tests that failed both times; its first error is that of a run whose
 * failures are exactly those (the second, typically, once the flaky test
 * passed), else none: an error that may be a flaky test's identifies nothing.
 */
export function judgeFlaky(
  first: Fingerprint,
  runs: { first: RubricOutput; second: RubricOutput },
  repoDir?: string,
): FlakyJudgement {
  const before = first.tests ?? [];
  const { second } = runs;
  const after = second.exitCode === 0 ? [] : failingTests(second.log, second.report, repoDir);
  if (after === null) return { flaky: [], fingerprint: first };
  const stable = before.filter((t) => after.includes(t));
  const flaky = sortTests([...before, ...after].filter((t) => !stable.includes(t)));
  if (flaky.length === 0) return { flaky, fingerprint: first };
  if (stable.length === 0) return { flaky, fingerprint: failedFingerprint(null, '', first.treeId) };
  const source = after.length === stable.length ? second : before.length === stable.length ? runs.first : null;
  const error = source === null ? '' : firstError(source.log);
  return { flaky, fingerprint: failedFingerprint(sortTests(stable), error, first.treeId) };
}
