import { type EnvironmentFailure, environmentFailure } from '../../fingerprint/environment.js';
import { type Fingerprint, failingTests } from '../../fingerprint/fingerprint.js';
import { type RerunMode, shouldRerun } from '../../fingerprint/flaky.js';
import { shouldFingerprint } from '../../fingerprint/streak.js';
import { SANDBOX_PATHS, type TreeIds } from '../../ports/sandbox.js';
import { noteEgress } from '../base/egress.js';
import type { Run } from '../base/run.js';
import { beyondBase } from './base-rules.js';
import {
  fingerprintTrees,
  type RubricRun,
  rubricSettings,
  runRubric,
  TIMEOUT_EXIT,
  takeFingerprint,
} from './rubric.js';
import type { LoopCall } from './step-call.js';
import { rerunFailed } from './step-rerun.js';

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
  /** The loop's work is acceptable: the rubric passed, or (CHALK_BASELINE=known) failed only where the base did. */
  green: boolean;
  /** CHALK_BASELINE=known: the failing tests the loop adds to the base's; null otherwise. */
  beyond: string[] | null;
  /** The rubric could not start (a missing command): the environment's failure, not the agent's. */
  environment: EnvironmentFailure | null;
}

/**
 * The harness's own rubric run after the call, and the loop's fingerprint (when rules are not off
 * and the agent finished). The fingerprint's D is the tree before the run, taken with the tree the
 * run's changes are put back to (work.ts) in one call. Green: it passed, or under CHALK_BASELINE=known it failed only where the
 * base did. A rubric that could not start is the environment's failure. A failed run whose
 * failing tests are known runs once more on the same tree (step-rerun.ts, unless
 * CHALK_RERUN_FAILED=off). The loop's outcome stays the first run's: a flaky failure is no progress.
 */
export async function rubricStep(run: Run, trees: TreeIds | null): Promise<LoopRubric> {
  const r = await rubricRuns(run, trees);
  // What the rubric was refused on its way out: the `next:` line names it when the loop fails.
  run.egressBlocked = await noteEgress({
    session: run.session,
    path: run.ctx.paths.egress,
    log: run.log,
    phase: `loop ${run.tracker.loop} (rubric)`,
  });
  return r;
}

/**
 * D and the whole tree, in one sandbox call right after the agent's (the loop takes the tree the
 * agent left from it too); null when this loop takes no fingerprint. Nothing runs in the sandbox
 * between them and the rubric but the graft of the agent's work, which leaves the working tree alone.
 */
export function fingerprintTreesAfter(run: Run, call: LoopCall): Promise<TreeIds> | null {
  if (!shouldFingerprint(run.rules, call.result.status === 'ok')) return null;
  return fingerprintTrees(run.ctx, run.session, rubricSettings(run).reportPath);
}

async function rubricRuns(run: Run, trees: TreeIds | null): Promise<LoopRubric> {
  const { ctx, deps, session } = run;
  const settings = rubricSettings(run);
  const started = deps.clock.now().getTime();
  const rubric = await run.work.harness(() => runRubric(ctx, session, settings, run.signal), {
    ...(trees ? { before: trees.whole } : {}),
  });
  const ms = deps.clock.now().getTime() - started;
  const fingerprint = trees ? takeFingerprint(rubric, trees.without) : null;
  const failed = rubric.exitCode !== 0;
  const tests = fingerprint
    ? fingerprint.tests
    : failed
      ? failingTests(rubric.log, rubric.report, SANDBOX_PATHS.repo)
      : null;
  const environment =
    failed && !rubric.capped ? environmentFailure({ exitCode: rubric.exitCode, log: rubric.log, tests }) : null;
  const stopped = rubric.capped || rubric.exitCode === TIMEOUT_EXIT;
  // A rubric a limit or the sandbox ended (killed for memory) finished nothing to compare with the base.
  const beyond =
    run.baseline && failed && !stopped && !rubric.ending && !environment ? beyondBase(run.baseline, tests) : null;
  const done = { rubric, fingerprint, ms, flaky: [], rerunMs: null, beyond, environment };
  if (!failed || beyond?.length === 0) return { ...done, green: true };
  const mode = deps.config.str('CHALK_RERUN_FAILED') as RerunMode;
  if (
    environment ||
    run.signal?.aborted ||
    !fingerprint ||
    !shouldRerun(mode, fingerprint, { capped: rubric.capped, timedOut: stopped })
  ) {
    return { ...done, green: false };
  }
  const again = await rerunFailed(run, { rubric, fingerprint, settings, ms });
  const beyondAfter = run.baseline ? beyondBase(run.baseline, again.fingerprint.tests) : null;
  return {
    ...done,
    fingerprint: again.fingerprint,
    flaky: again.flaky,
    rerunMs: again.ms,
    beyond: beyondAfter,
    green: false,
  };
}
