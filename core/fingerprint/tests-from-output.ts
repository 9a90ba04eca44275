import { cleanLog, logLines, NON_SPACE, SPACE } from './log.js';
import { detectRunners } from './runners/index.js';

/**
 * Failing test IDs named in a test runner's own output, for rubrics that
 * write no report: every runner in the registry (core/fingerprint/runners)
 * whose output the log looks like gives the IDs it reads, in registry order.
 *
 * OUTPUT_PATTERNS holds the line patterns not yet moved into a runner file
 * (jest's `  ● Suite › test name`, read as before until the JavaScript
 * runners join the registry).
 */
export const OUTPUT_PATTERNS: ReadonlyArray<{ runner: string; pattern: RegExp }> = [
  { runner: 'jest', pattern: new RegExp(`^${SPACE}*● (.* › .*${NON_SPACE})${SPACE}*$`) },
];

/** Every failing test ID the output names, runner by runner in output order, repeats included. */
export function testsFromOutput(log: string): string[] {
  const clean = cleanLog(log);
  const ids: string[] = [];
  // A loop, not push(...ids): a log may name more failing tests than a call takes arguments.
  for (const runner of detectRunners(clean)) for (const id of runner.failingTests(clean) ?? []) ids.push(id);
  if (OUTPUT_PATTERNS.length === 0) return ids;
  for (const line of logLines(clean)) {
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
