import type { Fingerprint } from '../fingerprint/fingerprint.js';
import { shouldFingerprint } from '../fingerprint/streak.js';
import { type RubricRun, runRubric, takeFingerprint } from './rubric.js';
import type { Run } from './run.js';
import type { LoopCall } from './step-call.js';

export interface LoopRubric {
  rubric: RubricRun;
  /** Taken before anything is committed, so D is the tree the agent left; null when not taken. */
  fingerprint: Fingerprint | null;
  /** How long the rubric took. */
  ms: number;
}

/** The harness's own rubric run after the call, and the loop's fingerprint (when rules are not off and the agent finished). */
export async function rubricStep(run: Run, call: LoopCall): Promise<LoopRubric> {
  const { ctx, deps, session } = run;
  const { config } = deps;
  const reportPath = config.str('CHALK_TEST_REPORT');
  const started = deps.clock.now().getTime();
  const rubric = await runRubric(
    ctx,
    session,
    {
      command: ctx.rubricCommand,
      timeoutS: config.num('CHALK_RUBRIC_TIMEOUT'),
      reportPath,
      rules: run.rules,
      capMb: config.num('CHALK_OUTPUT_CAP_MB'),
    },
    run.signal,
  );
  const ms = deps.clock.now().getTime() - started;
  const fingerprint = shouldFingerprint(run.rules, call.result.status === 'ok')
    ? await takeFingerprint(ctx, session, rubric, reportPath)
    : null;
  return { rubric, fingerprint, ms };
}
