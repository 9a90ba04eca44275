import { openCount } from '../../spec/checkpoints.js';
import { reasons } from '../base/detention-reasons.js';
import type { GuardVerdict } from '../base/guard.js';
import { bringHome, homeLimits } from '../base/home.js';
import { classifyLoop, type LoopEnding } from '../base/policy.js';
import type { LoopPlan, Run } from '../base/run.js';
import type { LoopCall } from './step-call.js';
import type { LoopRubric } from './step-rubric.js';

export interface LoopLanding {
  ending: LoopEnding;
  /** The host HEAD after the loop (moved when green work came home). */
  base: string;
}

/**
 * A green loop's work (the agent's, not what the setup or the rubric made:
 * work.ts) is committed in the sandbox and brought home (the guard judging it
 * on the host); then how the loop ended, from the call, the rubric and the
 * host's spec.
 */
export async function landStep(run: Run, plan: LoopPlan, call: LoopCall, r: LoopRubric): Promise<LoopLanding> {
  const { ctx, deps, session } = run;
  let base = run.base;
  let openAfter = plan.openBefore;
  let guard: GuardVerdict | undefined;
  let refused: string | undefined;
  if (call.result.status === 'ok' && r.green) {
    const home = await bringHome(ctx, deps.git, session, {
      commit: run.work.commitRequest(`chalk(${ctx.ticket}): ${plan.mode}, loop ${plan.loop}`, run.base),
      base: run.base,
      target: { kind: 'fast-forward', branch: ctx.branch },
      limits: homeLimits(deps.config),
      textbook: deps.config.str('CHALK_TEXTBOOK'),
      forgeGuarded: deps.guardedPaths,
      specAtBase: run.specs.at(run.base),
    });
    if (home.kind === 'home' || home.kind === 'nothing') {
      if (home.kind === 'home') {
        base = home.head;
        run.specs.remember(home.head, home.spec);
      }
      // The spec as git stores it (what the guard judged), not the worktree's copy, which a
      // `.gitattributes` conversion (working-tree-encoding, a filter) can make read otherwise.
      openAfter = openCount(home.kind === 'home' ? (home.spec ?? '') : await run.specs.text(run.base));
      // The rubric passed on what the host now has.
      run.greenAt = base;
    } else if (home.kind === 'guarded') {
      guard = home.verdict;
    } else if (home.kind === 'refused') {
      refused = home.reason;
    }
  }
  const classified = classifyLoop({
    mode: plan.mode,
    agentStatus: call.result.status,
    rubricExit: r.green ? 0 : r.rubric.exitCode,
    openBefore: plan.openBefore,
    openAfter,
    ...(guard ? { guard } : {}),
    ...(refused !== undefined ? { refused } : {}),
    ...(r.rubric.capped ? { rubricCappedMb: deps.config.num('CHALK_OUTPUT_CAP_MB') } : {}),
    ...(r.rubric.ending ? { rubricEnding: r.rubric.ending } : {}),
    ...(call.result.ending ? { agentEnding: call.result.ending } : {}),
  });
  // Under CHALK_BASELINE=known a failed loop is told what it added to the base's failures.
  const added = r.beyond && r.beyond.length > 0 && classified.ended === 'failed' && !classified.guarded;
  const ending = added
    ? { ...classified, reason: `${classified.reason}, ${reasons.beyondBase(r.beyond ?? [])}` }
    : classified;
  return { ending, base };
}
