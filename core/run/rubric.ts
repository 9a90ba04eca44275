import { writeFileSync } from 'node:fs';
import { type Fingerprint, fingerprintFailure, fingerprintPass } from '../fingerprint/fingerprint.js';
import type { RulesMode } from '../fingerprint/streak.js';
import { SANDBOX_PATHS, type SandboxSession } from '../ports/sandbox.js';
import type { RunContext } from './context.js';
import { notesFile } from './prompt.js';

/** `timeout`'s exit code, which a killed rubric reports. */
export const TIMEOUT_EXIT = 124;

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface RubricRun {
  exitCode: number;
  /** The combined output, as written to `io/rubric.log`. */
  log: string;
  /** The test report's content when one is configured and was written; else null. */
  report: string | null;
}

export interface RubricSettings {
  command: string;
  timeoutS: number;
  /** `CHALK_TEST_REPORT`, relative to the repository; '' when none. */
  reportPath: string;
  rules: RulesMode;
}

/**
 * The harness's own rubric run in the sandbox: the old report is removed
 * first (unless rules are off), then `bash -c CHALK_TEST_CMD` in the clone,
 * killed after the timeout (exit 124). Output goes to `io/rubric.log`, the
 * report (if any) is copied to `io/report`.
 */
export async function runRubric(
  ctx: RunContext,
  session: SandboxSession,
  s: RubricSettings,
  signal?: AbortSignal,
): Promise<RubricRun> {
  const useReport = s.reportPath !== '' && s.rules !== 'off';
  if (useReport) await session.exec(`rm -f -- ${quote(s.reportPath)}`, { signal });
  const chunks: string[] = [];
  const r = await session.exec(`bash -c ${quote(s.command)}`, {
    timeoutMs: s.timeoutS * 1000,
    onOutput: (c) => chunks.push(c),
    signal,
  });
  const log = chunks.length > 0 ? chunks.join('') : r.stdout + r.stderr;
  writeFileSync(ctx.paths.rubricLog, log);
  const exitCode = r.timedOut ? TIMEOUT_EXIT : r.exitCode;
  let report: string | null = null;
  if (useReport) {
    const cat = await session.exec(`cat -- ${quote(s.reportPath)}`, { signal });
    if (cat.exitCode === 0 && cat.stdout !== '') {
      report = cat.stdout;
      writeFileSync(ctx.paths.report, report);
    }
  }
  return { exitCode, log, report };
}

/**
 * The loop's fingerprint, taken before anything is committed: T and E from a
 * failed run's output (or report), D from the working tree (the notes file
 * and the report left out).
 */
export async function takeFingerprint(
  ctx: RunContext,
  session: SandboxSession,
  rubric: RubricRun,
  reportPath: string,
): Promise<Fingerprint> {
  // git refuses a pathspec naming an ignored file, and an ignored report is outside the tree anyway.
  const reportTracked =
    reportPath !== '' && (await session.exec(`git check-ignore -q -- ${quote(reportPath)}`)).exitCode !== 0;
  const exclude = [notesFile(ctx.ticket), ...(reportTracked ? [reportPath] : [])];
  const treeId = (await session.treeId(exclude)) ?? '';
  return rubric.exitCode === 0
    ? fingerprintPass(treeId)
    : fingerprintFailure({ log: rubric.log, report: rubric.report, treeId, repoDir: SANDBOX_PATHS.repo });
}
