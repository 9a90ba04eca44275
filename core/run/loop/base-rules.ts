import { describeEnvironment, type EnvironmentFailure } from '../../fingerprint/environment.js';
import { cleanLog, type LogInput, logLines } from '../../fingerprint/log.js';
import { environmentAdvice, reasons } from '../base/detention-reasons.js';

/**
 * The base, judged before any agent call (pure; baseline.ts runs it): the
 * rubric once on the commit the ticket starts from. Green: the loops go on.
 * Red: the run stops with one line naming the failing tests and the two ways
 * on (fix the base, or `CHALK_BASELINE=known`, under which a loop is green
 * when it adds no failing test to the base's). A rubric that cannot start is
 * the environment's failure, said with the missing command. A base that fails
 * because Chalk's own files fail the repository's checks is said as that.
 */

/** `CHALK_BASELINE`. */
export type BaselineMode = 'check' | 'known' | 'off';

/** The exit code of a run stopped by a red base, before any agent call. */
export const BASE_RED_EXIT = 6;
/** The exit code of a run whose rubric cannot start in the sandbox (a missing command). */
export const ENVIRONMENT_EXIT = 7;

/** What the rubric's run on the base comes to (kept in the host's cache, per base commit and image). */
export interface BaseResult {
  exitCode: number;
  /** The failing test IDs the fingerprint reads, sorted; null when it names none. */
  tests: string[] | null;
  firstError: string;
  environment: EnvironmentFailure | null;
  /** Chalk's own files the failing output names (CLAUDE.md, .chalk/..., specs/...). */
  chalkFiles: string[];
  /** Stopped for printing past CHALK_OUTPUT_CAP_MB, or killed after CHALK_RUBRIC_TIMEOUT. */
  stopped: 'capped' | 'timeout' | null;
  /** The paths the run added (a report, coverage): never taken from the agent, in any sandbox. */
  made: string[];
}

export type BaseJudgement =
  | { kind: 'green' }
  /** Red, and accepted (CHALK_BASELINE=known): these failures were there before. */
  | { kind: 'known'; failures: string[] }
  | { kind: 'environment'; failure: EnvironmentFailure }
  | { kind: 'red' };

const escaped = (path: string) => path.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&');

/** Chalk's own files, as a failing check's output may name them: its own, and the forges' CI gate files. */
function chalkFilePattern(gateFiles: readonly string[]): RegExp {
  const own = ['CLAUDE\\.md', 'AGENTS\\.md', '\\.chalk/[\\w.-]+', 'specs/[\\w.-]+\\.md', ...gateFiles.map(escaped)];
  return new RegExp(`(?<![\\w./-])(?:\\./|/work/repo/)?(${own.join('|')})(?![\\w./-])`, 'g');
}

/** Chalk's own files a log names, each once, in order (at most 10). */
export function chalkFilesIn(log: LogInput, gateFiles: readonly string[]): string[] {
  const found = new Set<string>();
  const pattern = chalkFilePattern(gateFiles);
  for (const line of logLines(cleanLog(log))) {
    for (const m of line.matchAll(pattern)) if (m[1]) found.add(m[1]);
    if (found.size >= 10) break;
  }
  return [...found];
}

export function judgeBase(r: BaseResult, mode: BaselineMode): BaseJudgement {
  if (r.exitCode === 0 && r.stopped === null) return { kind: 'green' };
  if (r.environment) return { kind: 'environment', failure: r.environment };
  if (mode === 'known' && r.stopped === null && r.tests !== null && r.tests.length > 0) {
    return { kind: 'known', failures: r.tests };
  }
  return { kind: 'red' };
}

const short = (commit: string) => commit.slice(0, 12);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** At most `max` IDs, then how many more. */
export function someTests(tests: readonly string[], max = 5): string {
  const shown = tests.slice(0, max).join(', ');
  return tests.length > max ? `${shown} and ${tests.length - max} more` : shown;
}

/** The one line a red base stops the run with. */
export function redBaseLine(r: BaseResult, commit: string): string {
  const at = `the base ${short(commit)} is red before any agent call`;
  if (r.stopped === 'timeout')
    return `${at}: the rubric was killed after CHALK_RUBRIC_TIMEOUT; fix the base branch, or raise CHALK_RUBRIC_TIMEOUT`;
  if (r.stopped === 'capped')
    return `${at}: the rubric printed past CHALK_OUTPUT_CAP_MB and was stopped; fix the base branch`;
  if (r.tests !== null && r.tests.length > 0) {
    const also = r.chalkFiles.length > 0 ? ` (its output also names Chalk's own ${r.chalkFiles.join(', ')})` : '';
    return `${at}: ${plural(r.tests.length, 'test')} fail (${someTests(r.tests)})${also}; fix the base branch, or set CHALK_BASELINE=known to take these failures as the baseline (a loop is then green when it adds no failing test)`;
  }
  if (r.chalkFiles.length > 0) {
    return `${at}: the rubric fails (exit ${r.exitCode}) on Chalk's own ${r.chalkFiles.join(', ')}, which the repository's checks refuse; make ${r.chalkFiles.length === 1 ? 'it pass them' : 'them pass'} (e.g. run the repository's formatter on ${r.chalkFiles[0]}) and commit that to the base branch`;
  }
  const error = r.firstError ? `, first error: ${r.firstError.slice(0, 200)}` : '';
  return `${at}: the rubric fails (exit ${r.exitCode}) naming no test Chalk can read${error}; fix the base branch (CHALK_BASELINE=known needs the failing tests' IDs: set CHALK_TEST_REPORT, see chalk doctor)`;
}

/** The one line a rubric that cannot start on the base stops the run with (`log`: where its output is). */
export function environmentLine(e: EnvironmentFailure, log: string): string {
  const advice = environmentAdvice(e.command, log, false);
  return `${reasons.environment(describeEnvironment(e))}; nothing was asked of the agent. Next: ${advice}`;
}

/**
 * The failing tests a loop adds to the baseline's: those not among them; null
 * when the loop's failing tests are unknown (nothing can be compared).
 */
export function beyondBase(baseline: readonly string[], tests: readonly string[] | null): string[] | null {
  if (tests === null) return null;
  const before = new Set(baseline);
  return tests.filter((t) => !before.has(t));
}
