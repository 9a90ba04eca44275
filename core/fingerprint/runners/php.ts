import { idsInSections } from './lines.js';
import type { Runner } from './types.js';

/**
 * PHPUnit: numbered entries under `There was 1 failure:` / `There were 2 errors:`,
 * `1) CalcTest::testAdd` (a data set stays on the ID: `... with data set #0 (1, 2)`).
 * Risky, skipped, incomplete and warning sections are not failures.
 */
export const PHPUNIT: Runner = {
  name: 'phpunit',
  detect: (log) => /^PHPUnit [0-9]+\.[0-9]+/m.test(log) || /^Tests: [0-9]+, Assertions: [0-9]+/m.test(log),
  failingTests: (log) =>
    idsInSections(log, {
      opens: /^There (?:was|were) [0-9]+ (.+):$/,
      counts: (m) => /^(failures?|errors?)$/.test(m[1] ?? ''),
      closes: /^(FAILURES!|ERRORS!|OK|Tests: |WARNINGS!)/,
      item: /^[0-9]+\) (\S+::\S.*)$/,
    }),
  errorLine: [
    /^Failed asserting that .+/,
    /^[A-Z]\w*(\\\w+)*(Exception|Error): .+/, // `Exception: boom`, `TypeError: ...`
  ],
  banner: [
    /^There (was|were) [0-9]+ .+:$/,
    /^(ERRORS|FAILURES|WARNINGS)!$/,
    /^Tests: [0-9]+, Assertions:/,
    /^PHPUnit [0-9]/,
    /^Time: /,
  ],
  reportHint: 'phpunit --log-junit test-report.xml, and CHALK_TEST_REPORT=test-report.xml',
};
