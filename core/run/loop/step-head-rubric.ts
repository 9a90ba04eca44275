import { failingTests } from '../../fingerprint/fingerprint.js';
import { SANDBOX_PATHS } from '../../ports/sandbox.js';
import type { Run } from '../base/run.js';
import { beyondBase } from './base-rules.js';
import { rubricSettings, runRubric } from './rubric.js';

/** The finding a branch gets when the rubric fails on it as it stands (the fix-review loop acts on it). */
export const headRubricFinding = (command: string, exitCode: number) =>
  `- [blocker] the rubric (${command}) fails on the branch as it stands (exit ${exitCode}); make it pass, leaving the checkpoints ticked`;

/**
 * Nothing is reviewed, and so nothing graduates, before the rubric has passed on what the host
 * has. A run that reaches the review with no green loop on the current HEAD (it started with every
 * checkpoint ticked: a person ticked them, office hours, a resumed run) runs the rubric once on
 * the sandbox's clone of HEAD, with no agent call (what it writes is put back, as after every
 * rubric run). Passed, or under CHALK_BASELINE=known failed only where the base did: the review
 * may go on. Failed: the finding a fix-review loop is given.
 */
export async function headRubric(run: Run): Promise<{ passed: true } | { passed: false; finding: string }> {
  const { ctx, session, log } = run;
  await session.reset();
  // The tree is HEAD's again: what a commit holds starts over from it.
  run.work.startOver(run.base);
  const settings = { ...rubricSettings(run), ...(run.baseline ? { reportCopy: null } : { reportPath: '' }) };
  const r = await run.work.harness(() => runRubric(ctx, session, settings, run.signal));
  log.info(`rubric on ${ctx.branch} as it stands, before the review: exit ${r.exitCode}`);
  const known =
    run.baseline !== null && r.exitCode !== 0 && !r.capped
      ? beyondBase(run.baseline, failingTests(r.log, r.report, SANDBOX_PATHS.repo))
      : null;
  if ((r.exitCode === 0 || known?.length === 0) && !r.capped) {
    run.greenAt = run.base;
    return { passed: true };
  }
  return { passed: false, finding: headRubricFinding(ctx.rubricCommand, r.exitCode) };
}
