import type { Fingerprint } from './fingerprint.js';
import { isBlank, tailLines } from './log.js';

/** Lines of rubric output a retry is shown by default. */
export const FEEDBACK_TAIL = 60;
/** Lines of rubric output the structured feedback shows after the tests and first error. */
export const STRUCTURED_TAIL = 20;

export interface FeedbackInput {
  /** Why the loop did not progress, e.g. `rubric failed (exit 1)`. */
  reason: string;
  /** The rubric's output (`io/rubric.log`), as written. */
  rubricLog: string;
  /** The loop's fingerprint when one was taken for a failed rubric; null otherwise. */
  fingerprint: Fingerprint | null;
  /** `CHALK_FP_FEEDBACK`. */
  fpFeedback: boolean;
}

/**
 * What the next (retry) loop is told in its `<failure>` block:
 * - by default the reason and the last 60 lines of rubric output;
 * - when the failed rubric was fingerprinted and `CHALK_FP_FEEDBACK=true`, or
 *   the rubric printed nothing, the structured form: the failing tests, the
 *   first error and the last 20 lines;
 * - a silent rubric without a fingerprint says so instead of showing nothing.
 */
export function retryFeedback({ reason, rubricLog, fingerprint, fpFeedback }: FeedbackInput): string {
  const tail = tailLines(rubricLog, FEEDBACK_TAIL);
  const silent = isBlank(tail);
  if (fingerprint?.rubric === 'failed' && (fpFeedback || silent))
    return structuredFeedback(reason, rubricLog, fingerprint);
  if (silent) return `${reason}\nthe rubric printed nothing`;
  return `${reason}\n${tail}`;
}

function structuredFeedback(reason: string, rubricLog: string, fp: Fingerprint): string {
  const lines = [reason];
  if (fp.tests === null) {
    lines.push('failing tests: not known (neither a report nor the output names any)');
  } else {
    lines.push(fp.tests.length === 1 ? 'failing test:' : `${fp.tests.length} failing tests:`);
    for (const id of fp.tests) lines.push(`- ${id}`);
  }
  lines.push(`first error: ${fp.firstError === '' ? '(none found)' : fp.firstError}`);
  const tail = tailLines(rubricLog, STRUCTURED_TAIL);
  if (isBlank(tail)) lines.push('the rubric printed nothing');
  else lines.push(`last ${STRUCTURED_TAIL} lines of output:`, tail);
  return lines.join('\n');
}
