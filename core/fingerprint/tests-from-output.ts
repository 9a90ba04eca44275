import { NON_SPACE, SPACE } from './log.js';

/**
 * Failing test IDs named in a test runner's own output, for rubrics that
 * write no report: every runner in the registry (core/fingerprint/runners)
 * whose output the log looks like gives the IDs it reads, in registry order
 * (read.ts, `testsFromOutput`).
 *
 * OUTPUT_PATTERNS holds the line patterns not yet moved into a runner file
 * (jest's `  ● Suite › test name`, read as before until the JavaScript
 * runners join the registry). Each names a word every line it matches holds: only the
 * lines holding one of them are read.
 */
export const OUTPUT_PATTERNS: ReadonlyArray<{ runner: string; pattern: RegExp; word: string }> = [
  { runner: 'jest', pattern: new RegExp(`^${SPACE}*● (.* › .*${NON_SPACE})${SPACE}*$`), word: '●' },
];
