import { cleanLog, linesHolding, NON_SPACE, SPACE } from './log.js';
import { detectRunners, type Runner } from './runners/index.js';

/**
 * Failing test IDs named in a test runner's own output, for rubrics that
 * write no report: every runner in the registry (core/fingerprint/runners)
 * whose output the log looks like gives the IDs it reads, in registry order.
 *
 * OUTPUT_PATTERNS holds the line patterns not yet moved into a runner file
 * (jest's `  ● Suite › test name`, read as before until the JavaScript
 * runners join the registry). Each names a word every line it matches holds: only the
 * lines holding one of them are read.
 */
export const OUTPUT_PATTERNS: ReadonlyArray<{ runner: string; pattern: RegExp; word: string }> = [
  { runner: 'jest', pattern: new RegExp(`^${SPACE}*● (.* › .*${NON_SPACE})${SPACE}*$`), word: '●' },
];

/** Every failing test ID the output names, runner by runner in output order, repeats included. */
export function testsFromOutput(log: string): string[] {
  const clean = cleanLog(log);
  return testsFromCleanOutput(clean, detectRunners(clean));
}

/** `testsFromOutput` of a log already cleaned (`cleanLog`), `detected` its runners. */
export function testsFromCleanOutput(clean: string, detected: readonly Runner[]): string[] {
  const ids: string[] = [];
  // A loop, not push(...ids): a log may name more failing tests than a call takes arguments.
  for (const runner of detected) for (const id of runner.failingTests(clean) ?? []) ids.push(id);
  for (const line of linesHolding(
    clean,
    OUTPUT_PATTERNS.map((p) => p.word),
  )) {
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
