import type { Fingerprint } from '../fingerprint/fingerprint.js';
import { judgeFlaky, type RerunMode, shouldRerun } from '../fingerprint/flaky.js';
import { shouldFingerprint } from '../fingerprint/streak.js';
import { SANDBOX_PATHS } from '../ports/sandbox.js';
import { type RubricRun, type RubricSettings, runRubric, TIMEOUT_EXIT, takeFingerprint } from './rubric.js';
import type { Run } from './run.js';
import type { LoopCall } from './step-call.js';

export interface LoopRubric {
  rubric: RubricRun;
  /** Taken before anything is committed, so D is the tree the agent left; null when not taken. Flaky tests left out. */
  fingerprint: Fingerprint | null;
  /** How long the rubric took. */
  ms: number;
  /** Tests that failed one run and passed the other on the same tree (CHALK_RERUN_FAILED); [] when none. */
  flaky: string[];
  /** How long the second run took; null when the rubric was not run again. */
  rerunMs: number | null;
}

/**
 * The harness's own rubric run after the call, and the loop's fingerprint (when rules are not off
 * and the agent finished). A failed run whose failing tests are known runs once more on the same
 * tree (unless CHALK_RERUN_FAILED=off); tests that then pass are flaky, logged and left out of the
 * fingerprint. The loop's outcome stays the first run's: a flaky failure is no progress.
 */
export async function rubricStep(run: Run, call: LoopCall): Promise<LoopRubric> {
  const { ctx, deps, session } = run;
  const { config } = deps;
  const reportPath = config.str('CHALK_TEST_REPORT');
  const settings: RubricSettings = {
    command: ctx.rubricCommand,
    timeoutS: config.num('CHALK_RUBRIC_TIMEOUT'),
    reportPath,
    rules: run.rules,
    capMb: config.num('CHALK_OUTPUT_CAP_MB'),
  };
  const started = deps.clock.now().getTime();
  const rubric = await runRubric(ctx, session, settings, run.signal);
  const ms = deps.clock.now().getTime() - started;
  const fingerprint = shouldFingerprint(run.rules, call.result.status === 'ok')
    ? await takeFingerprint(ctx, session, rubric, reportPath)
    : null;
  const mode = config.str('CHALK_RERUN_FAILED') as RerunMode;
  const timedOut = rubric.exitCode === TIMEOUT_EXIT;
  if (run.signal?.aborted || !shouldRerun(mode, fingerprint, { capped: rubric.capped, timedOut }) || !fingerprint) {
    return { rubric, fingerprint, ms, flaky: [], rerunMs: null };
  }
  const againStarted = deps.clock.now().getTime();
  const again = await runRubric(
    ctx,
    session,
    { ...settings, logPath: ctx.paths.rubricRerunLog, reportCopy: null },
    run.signal,
  );
  const rerunMs = deps.clock.now().getTime() - againStarted;
  const known = fingerprint.tests?.length ?? 0;
  const judged = judgeFlaky(fingerprint, { first: rubric, second: again }, SANDBOX_PATHS.repo);
  run.log.info(
    `rubric run again on the same tree (${known} failing test${known === 1 ? '' : 's'} known): exit ${again.exitCode}, ${rerunMs} ms (first run ${ms} ms)` +
      (judged.flaky.length > 0
        ? `; flaky, left out of the fingerprint: ${judged.flaky.join(', ')}`
        : '; no test is flaky'),
  );
  return { rubric, fingerprint: judged.fingerprint, ms, flaky: judged.flaky, rerunMs };
}
