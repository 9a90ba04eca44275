import { NON_SPACE as N, SPACE as S } from '../log.js';
import { idsFromLines } from './lines.js';
import type { Runner } from './types.js';

/**
 * go test: `--- FAIL: TestAdd (0.00s)`, subtests indented as `    --- FAIL: TestTable/case_1 (0.00s)`.
 * The ID is the test's name (the package is not on the line).
 */
export const GO: Runner = {
  name: 'go test',
  detect: (log) => new RegExp(`^${S}*--- FAIL: `, 'm').test(log) || /^FAIL\t\S+/m.test(log),
  failingTests: (log) => idsFromLines(log, [{ pattern: new RegExp(`^${S}*--- FAIL: (${N}+)`) }]),
  errorLine: [
    /^\s+\S+\.go:[0-9]+: \S/, // t.Errorf / t.Fatalf: `    calc_test.go:8: Add(1, 2) = 3, want 4`
    /^panic: \S/, // a panicking test
    /^\S+\.go:[0-9]+:[0-9]+: \S/, // a build error: `./calc.go:5:2: undefined: x`
  ],
  banner: [
    new RegExp(`^${S}*--- FAIL: `),
    /^FAIL$/,
    /^FAIL /,
    /^=== (RUN|PAUSE|CONT|NAME)/,
    /^exit status [0-9]+$/,
    /^ok\s+\S+/,
  ],
  reportHint: 'go test -json ./... > test-report.jsonl in the rubric, and CHALK_TEST_REPORT=test-report.jsonl',
};
