/** Loop fingerprints (failing tests, first error, tree ID) and the verdict rules. */
export { FEEDBACK_TAIL, type FeedbackInput, retryFeedback, STRUCTURED_TAIL } from './feedback.js';
export {
  type FailedRubric,
  type Fingerprint,
  failingTests,
  fingerprintFailure,
  fingerprintPass,
  sortTests,
  testsText,
  UNKNOWN,
  UNKNOWN_TESTS_LINE,
  validTreeId,
} from './fingerprint.js';
export {
  ERROR_LINE,
  GENERIC_ERRORS,
  isGenericError,
  isSpecificError,
  normaliseError,
} from './first-error.js';
export { cleanLog, isBlank, type LogInput, tailLines } from './log.js';
export { firstError, testsFromOutput } from './read.js';
export { type ReportFormat, reportFormat, SANDBOX_REPO, testsFromReport } from './report.js';
export {
  type JudgedFingerprint,
  type Judgement,
  type RulesMode,
  shouldFingerprint,
  stopsRun,
  VerdictStreak,
} from './streak.js';
export { OUTPUT_PATTERNS } from './tests-from-output.js';
export { clearReportCommand, TREE_ID_SCRIPT, treeIdCommand } from './tree-id.js';
export {
  isStopping,
  type LoopEnd,
  STOPPING_VERDICTS,
  type StoppingVerdict,
  VERDICTS,
  type Verdict,
  verdictFor,
} from './verdict.js';
