import { NON_SPACE as N, SPACE } from '../log.js';
import { allOf, anyLine } from './detect.js';
import { type IdPattern, idsFromLines, idsOnLines } from './lines.js';
import type { Runner } from './types.js';

/** pytest's options that take the next word as their value (core and the common plugins). */
const PYTEST_VALUE_OPTIONS = [
  '-k',
  '-m',
  '-p',
  '-c',
  '-o',
  '-W',
  '-n',
  '-r',
  '--junitxml',
  '--junit-xml',
  '--junit-prefix',
  '--rootdir',
  '--basetemp',
  '--confcutdir',
  '--cov',
  '--cov-report',
  '--cov-config',
  '--cov-fail-under',
  '--durations',
  '--maxfail',
  '--tb',
  '--log-level',
  '--log-cli-level',
  '--log-file',
  '--import-mode',
  '--ignore',
  '--ignore-glob',
  '--deselect',
  '--override-ini',
  '--capture',
  '--color',
  '--dist',
  '--reruns',
  '--timeout',
  '--html',
  '--numprocesses',
  '--maxprocesses',
  '--randomly-seed',
  '--doctest-glob',
  '--json-report-file',
];

/** pytest's lines naming a failing test; every line one matches holds `PYTEST_ID_WORDS`. */
export const PYTEST_IDS: readonly IdPattern[] = [
  { pattern: new RegExp(`^(?:FAILED|ERROR) (${N}+::${N}+)`) },
  { pattern: new RegExp(`^(${N}+::${N}+) (?:FAILED|ERROR)(${SPACE}|$)`) },
  { pattern: new RegExp(`^\\[gw[0-9]+\\] \\[ *[0-9]+%\\] (?:FAILED|ERROR) (${N}+::${N}+)`) },
];
export const PYTEST_ID_WORDS = ['FAILED', 'ERROR'];

/**
 * pytest, as it prints with `-q`, `-v`, `-rA` (colour removed first):
 * - the short summary (on by default since pytest 6): `FAILED tests/t.py::test_x - msg`, `ERROR tests/t.py::test_x - msg`;
 * - `-v` progress lines: `tests/t.py::test_x FAILED  [ 50%]`;
 * - pytest-xdist: `[gw0] [ 50%] FAILED tests/t.py::test_x`.
 * The ID is pytest's node ID up to the first space, as `--junitxml`'s file::name would give it.
 */
export const PYTEST: Runner = {
  name: 'pytest',
  detect: anyLine(
    /^=+ (test session starts|FAILURES|ERRORS|short test summary info) =+$/m,
    new RegExp(`^(FAILED|ERROR) ${N}+::`, 'm'),
  ),
  failingTests: idsOnLines(PYTEST_IDS, PYTEST_ID_WORDS),
  // The assertion pytest rewrites: `E       assert 3 == 4`, `E   ModuleNotFoundError: ...`.
  errorLine: [/^E\s+\S/],
  banner: [
    /^=+ .* =+$/, // every section line: FAILURES, ERRORS, short test summary info, "2 failed, 1 passed in 0.03s"
    /^_+ .* _+$/, // a failure's header: ____ test_x ____
    new RegExp(`^${N}+::${N}+ (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)`), // -v progress
  ],
  reportHint: 'pytest --junitxml=test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
  // Node IDs in place of the paths given: `pytest -q 'tests/t.py::test_x'`. A JUnit report's
  // `module.Class::name` does not say where the file ends, so those run the rubric whole.
  select: {
    commands: [['pytest'], ['py.test']],
    valueOptions: PYTEST_VALUE_OPTIONS,
    args: ({ ids }) => (ids.every((id) => /^[^:]+\.py::\S/.test(id)) ? { args: [...ids] } : null),
  },
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
  detect: allOf(anyLine(/^Ran [0-9]+ tests? in /m), anyLine(/^(FAIL|ERROR): \S+ \(/m)),
  failingTests: (log) =>
    idsFromLines(log, [{ pattern: new RegExp(`^(?:FAIL|ERROR): (${N}+) \\(([^()]+?)\\)`), id: unittestId }]),
  // The exception line closing a traceback: `AssertionError: 3 != 4`, `ValueError: boom`.
  errorLine: [/^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)(: .*)?$/],
  banner: [/^=+$/, /^-+$/, /^(FAIL|ERROR): \S+ \(/, /^FAILED \((failures|errors)=/, /^Ran [0-9]+ tests? in /],
  reportHint:
    'unittest writes no report: run the same tests under pytest (it runs unittest cases) with --junitxml=test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
};
