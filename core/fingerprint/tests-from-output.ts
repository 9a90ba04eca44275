import { logLines, NON_SPACE, SPACE } from './log.js';

/**
 * Failing test IDs named in a test runner's own output, for rubrics that
 * write no report. One pattern per runner; a line gives at most one ID (the
 * first pattern that matches it), exactly as the runners print them:
 *
 * | runner | line                                   | ID                       |
 * | pytest | `FAILED tests/test_a.py::test_x - ...` | `tests/test_a.py::test_x` |
 * | go     | `    --- FAIL: TestX (0.00s)`          | `TestX`                  |
 * | cargo  | `test tests::x ... FAILED`             | `tests::x`               |
 * | jest   | `  ● Suite › test name`                | `Suite › test name`      |
 */
export const OUTPUT_PATTERNS: ReadonlyArray<{ runner: string; pattern: RegExp }> = [
  { runner: 'pytest', pattern: new RegExp(`^FAILED (${NON_SPACE}+::${NON_SPACE}+)`) },
  { runner: 'go', pattern: new RegExp(`^${SPACE}*--- FAIL: (${NON_SPACE}+)`) },
  { runner: 'cargo', pattern: new RegExp(`^test (${NON_SPACE}+) \\.\\.\\. FAILED`) },
  { runner: 'jest', pattern: new RegExp(`^${SPACE}*● (.* › .*${NON_SPACE})${SPACE}*$`) },
];

/** Every failing test ID the output names, in output order, repeats included. */
export function testsFromOutput(log: string): string[] {
  const ids: string[] = [];
  for (const line of logLines(log)) {
    for (const { pattern } of OUTPUT_PATTERNS) {
      const m = pattern.exec(line);
      if (m?.[1] !== undefined) {
        ids.push(m[1]);
        break;
      }
    }
  }
  return ids;
}
