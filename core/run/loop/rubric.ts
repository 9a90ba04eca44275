import type { Config } from '../../config/config.js';
import { timedOutNote } from '../../config/limits.js';
import { type Fingerprint, fingerprintFailure, fingerprintPass } from '../../fingerprint/fingerprint.js';
import type { RulesMode } from '../../fingerprint/streak.js';
import { writeHostFile } from '../../fs/host-file.js';
import { SANDBOX_PATHS, SandboxFileError, type SandboxSession, type TreeIds } from '../../ports/sandbox.js';
import type { RunContext } from '../base/context.js';
import { shellWord as quote, runLogged } from '../base/logged-exec.js';
import { notesFile } from '../base/prompt.js';

/** `timeout`'s exit code, which a killed rubric reports. */
export const TIMEOUT_EXIT = 124;

export interface RubricRun {
  exitCode: number;
  /**
   * The combined output, as written to `io/rubric.log`: the bytes the command wrote, as much
   * as the host keeps (the fingerprint reads them as UTF-8, a window at a time).
   */
  log: Buffer;
  /** The test report's content when one is configured and was written; else null. */
  report: string | null;
  /** The rubric printed past the output cap and was stopped. */
  capped: boolean;
  /** Why a configured report was not read (a symlink, a FIFO, too big), if it was not. */
  reportProblem: string | null;
  /**
   * How the rubric ended when its timeout or the sandbox ended it (`timed out
   * after 60 s (CHALK_RUBRIC_TIMEOUT)`, `was killed: the sandbox ran out of memory ...`); null otherwise.
   */
  ending: string | null;
}

export interface RubricSettings {
  command: string;
  timeoutS: number;
  /** `CHALK_TEST_REPORT`, relative to the repository; '' when none. */
  reportPath: string;
  rules: RulesMode;
  /** `CHALK_OUTPUT_CAP_MB`. */
  capMb: number;
  /** Where the output goes (default `io/rubric.log`); a second run keeps the first's log. */
  logPath?: string;
  /** Where the report is copied on the host (default `io/report`); null: not copied. */
  reportCopy?: string | null;
}

/** The rubric as this run runs it (CHALK_TEST_CMD and its settings). */
export function rubricSettings(run: { ctx: RunContext; deps: { config: Config }; rules: RulesMode }): RubricSettings {
  const { config } = run.deps;
  return {
    command: run.ctx.rubricCommand,
    timeoutS: config.num('CHALK_RUBRIC_TIMEOUT'),
    reportPath: config.str('CHALK_TEST_REPORT'),
    rules: run.rules,
    capMb: config.num('CHALK_OUTPUT_CAP_MB'),
  };
}

/** The most of a test report the host reads back from the sandbox. */
export const REPORT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The harness's own rubric run in the sandbox: the old report is removed
 * first (unless rules are off), then `bash -c CHALK_TEST_CMD` in the clone,
 * without the agent's credentials, killed after the timeout (exit 124) or
 * when it prints past CHALK_OUTPUT_CAP_MB. Output goes to `io/rubric.log`
 * (capped); the report (if any) is read back only as a regular file under
 * its cap and copied to `io/report`.
 */
export async function runRubric(
  ctx: RunContext,
  session: SandboxSession,
  s: RubricSettings,
  signal?: AbortSignal,
): Promise<RubricRun> {
  const useReport = s.reportPath !== '' && s.rules !== 'off';
  if (useReport) await session.exec(`rm -f -- ${quote(s.reportPath)}`, { signal });
  const r = await runLogged(session, s.command, {
    logPath: s.logPath ?? ctx.paths.rubricLog,
    capMb: s.capMb,
    timeoutMs: s.timeoutS * 1000,
    signal,
  });
  // A rubric stopped for printing too much has not passed, whatever its exit.
  const exitCode = r.timedOut ? TIMEOUT_EXIT : r.outputCapped && r.exitCode === 0 ? 1 : r.exitCode;
  const ending = r.outputCapped
    ? null
    : r.timedOut
      ? timedOutNote('CHALK_RUBRIC_TIMEOUT', s.timeoutS)
      : r.killedBy
        ? `was killed: ${r.killedBy}`
        : null;
  let report: string | null = null;
  let reportProblem: string | null = null;
  if (useReport) {
    try {
      const bytes = await session.readFile(s.reportPath, { maxBytes: REPORT_MAX_BYTES });
      if (bytes !== null && bytes.length > 0) {
        report = bytes.toString('utf8');
        const copy = s.reportCopy === undefined ? ctx.paths.report : s.reportCopy;
        if (copy !== null) writeHostFile(copy, bytes);
      }
    } catch (err) {
      if (!(err instanceof SandboxFileError)) throw err;
      reportProblem = err.message;
    }
  }
  return { exitCode, log: r.output, report, capped: r.outputCapped === true, reportProblem, ending };
}

/**
 * The trees a fingerprinted loop's rubric needs, taken in one call before it runs: the whole
 * tree (what the harness puts back after the run) and D, the tree the agent left without the
 * notes file and the report (unless git ignores it, which leaves it outside the tree anyway).
 */
export function fingerprintTrees(ctx: RunContext, session: SandboxSession, reportPath: string): Promise<TreeIds> {
  return session.treeIds({ exclude: [notesFile(ctx.ticket)], unlessIgnored: reportPath === '' ? [] : [reportPath] });
}

/** The loop's fingerprint: T and E from a failed run's output (or report), D the tree the agent left. */
export function takeFingerprint(rubric: RubricRun, treeId: string | null): Fingerprint {
  const d = treeId ?? '';
  return rubric.exitCode === 0
    ? fingerprintPass(d)
    : fingerprintFailure({ log: rubric.log, report: rubric.report, treeId: d, repoDir: SANDBOX_PATHS.repo });
}
