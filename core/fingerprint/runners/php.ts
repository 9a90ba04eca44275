import { logLines } from '../log.js';
import { anyLine } from './detect.js';
import { idsInSections, orNull } from './lines.js';
import type { Runner } from './types.js';

/** `--testdox`: a class's prose name on its own line, then ` ✘ Multiplies` per failing test: `Math::Multiplies`. */
function testdoxIds(log: string): string[] | null {
  const ids: string[] = [];
  let cls = '';
  for (const line of logLines(log)) {
    if (/^Summary of non-successful tests:$/.test(line)) break;
    if (/^\S/.test(line) && !/^(PHPUnit |Time: |Tests: |ERRORS!|FAILURES!|OK)/.test(line)) cls = line.trim();
    const m = /^ [✘☢] (.+)$/.exec(line);
    if (m?.[1] && cls !== '') ids.push(`${cls}::${m[1].trim()}`);
  }
  return orNull(ids);
}

/**
 * PHPUnit: numbered entries under `There was 1 failure:` / `There were 2 errors:`,
 * `1) CalcTest::testAdd` (a data set stays on the ID: `... with data set #0 (1, 2)`).
 * Risky, skipped, incomplete and warning sections are not failures. With `--testdox`,
 * the prose names: `Math::Multiplies`.
 */
export const PHPUNIT: Runner = {
  name: 'phpunit',
  detect: anyLine(/^PHPUnit [0-9]+\.[0-9]+/m, /^Tests: [0-9]+, Assertions: [0-9]+/m),
  failingTests: (log) =>
    idsInSections(log, {
      opens: /^There (?:was|were) [0-9]+ (.+):$/,
      counts: (m) => /^(failures?|errors?)$/.test(m[1] ?? ''),
      closes: /^(FAILURES!|ERRORS!|OK|Tests: |WARNINGS!)/,
      item: /^[0-9]+\) (\S+::\S.*)$/,
    }) ?? testdoxIds(log),
  errorLine: [
    /^(\s+│ )?Failed asserting that .+/, // `--testdox` puts its details behind `   │ `
    /^(\s+│ )?[A-Z]\w*(\\\w+)*(Exception|Error): .+/, // `Exception: boom`, `TypeError: ...`
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
