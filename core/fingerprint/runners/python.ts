import { NON_SPACE as N, SPACE } from '../log.js';
import { idsFromLines } from './lines.js';
import type { Runner } from './types.js';

/**
 * pytest, as it prints with `-q`, `-v`, `-rA` (colour removed first):
 * - the short summary (on by default since pytest 6): `FAILED tests/t.py::test_x - msg`, `ERROR tests/t.py::test_x - msg`;
 * - `-v` progress lines: `tests/t.py::test_x FAILED  [ 50%]`;
 * - pytest-xdist: `[gw0] [ 50%] FAILED tests/t.py::test_x`.
 * The ID is pytest's node ID up to the first space, as `--junitxml`'s file::name would give it.
 */
export const PYTEST: Runner = {
  name: 'pytest',
  detect: (log) =>
    /^=+ (test session starts|FAILURES|ERRORS|short test summary info) =+$/m.test(log) ||
    new RegExp(`^(FAILED|ERROR) ${N}+::`, 'm').test(log),
  failingTests: (log) =>
    idsFromLines(log, [
      { pattern: new RegExp(`^(?:FAILED|ERROR) (${N}+::${N}+)`) },
      { pattern: new RegExp(`^(${N}+::${N}+) (?:FAILED|ERROR)(${SPACE}|$)`) },
      { pattern: new RegExp(`^\\[gw[0-9]+\\] \\[ *[0-9]+%\\] (?:FAILED|ERROR) (${N}+::${N}+)`) },
    ]),
  // The assertion pytest rewrites: `E       assert 3 == 4`, `E   ModuleNotFoundError: ...`.
  errorLine: [/^E\s+\S/],
  banner: [
    /^=+ .* =+$/, // every section line: FAILURES, ERRORS, short test summary info, "2 failed, 1 passed in 0.03s"
    /^_+ .* _+$/, // a failure's header: ____ test_x ____
    new RegExp(`^${N}+::${N}+ (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)`), // -v progress
  ],
  reportHint: 'pytest --junitxml=test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
};

/** `FAIL: test_add (mod.Class.test_add)` (3.11+) or `FAIL: test_add (mod.Class)` (older) becomes `mod.Class.test_add`. */
function unittestId(m: RegExpExecArray): string {
  const name = m[1] ?? '';
  const where = m[2] ?? '';
  return where === name || where.endsWith(`.${name}`) ? where : `${where}.${name}`;
}

/**
 * unittest (`python -m unittest`): `FAIL: test_add (test_calc.CalcTest.test_add)` and
 * `ERROR: ...` headers; the ID is the dotted test name.
 */
export const UNITTEST: Runner = {
  name: 'unittest',
  detect: (log) => /^Ran [0-9]+ tests? in /m.test(log) && /^(FAIL|ERROR): \S+ \(/m.test(log),
  failingTests: (log) =>
    idsFromLines(log, [{ pattern: new RegExp(`^(?:FAIL|ERROR): (${N}+) \\(([^()]+?)\\)`), id: unittestId }]),
  // The exception line closing a traceback: `AssertionError: 3 != 4`, `ValueError: boom`.
  errorLine: [/^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)(: .*)?$/],
  banner: [/^=+$/, /^-+$/, /^(FAIL|ERROR): \S+ \(/, /^FAILED \((failures|errors)=/, /^Ran [0-9]+ tests? in /],
  reportHint:
    'unittest writes no report: run the same tests under pytest (it runs unittest cases) with --junitxml=test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
};
