import { readFileSync } from 'node:fs';
import { openCount } from '../spec/checkpoints.js';
import type { GuardVerdict } from './guard.js';
import { bringHome } from './home.js';
import { classifyLoop, type LoopEnding } from './policy.js';
import type { LoopPlan, Run } from './run.js';
import type { LoopCall } from './step-call.js';
import type { LoopRubric } from './step-rubric.js';

export interface LoopLanding {
  ending: LoopEnding;
  /** The host HEAD after the loop (moved when green work came home). */
  base: string;
}

/**
 * A green loop's work is committed in the sandbox and brought home (the guard
 * judging it on the host); then how the loop ended, from the call, the rubric
 * and the host's spec.
 */
export async function landStep(run: Run, plan: LoopPlan, call: LoopCall, r: LoopRubric): Promise<LoopLanding> {
  const { ctx, deps, session } = run;
  let base = run.base;
  let openAfter = plan.openBefore;
  let guard: GuardVerdict | undefined;
  if (call.result.status === 'ok' && r.rubric.exitCode === 0) {
    await session.commitAll(`chalk(${ctx.ticket}): ${plan.mode}, loop ${plan.loop}`);
    const home = await bringHome(ctx, deps.git, session, {
      base: run.base,
      target: { kind: 'fast-forward', branch: ctx.branch },
      textbook: deps.config.str('CHALK_TEXTBOOK'),
    });
    if (home.kind === 'home') {
      base = home.head;
      openAfter = openCount(readFileSync(ctx.specPath, 'utf8'));
    } else if (home.kind === 'guarded') {
      guard = home.verdict;
    } else if (home.kind === 'refused') {
      guard = { ok: false, files: [], reason: `the sandbox's work was refused: ${home.reason}` };
    }
  }
  const ending = classifyLoop({
    mode: plan.mode,
    agentStatus: call.result.status,
    rubricExit: r.rubric.exitCode,
    openBefore: plan.openBefore,
    openAfter,
    ...(guard ? { guard } : {}),
    ...(r.rubric.capped ? { rubricCappedMb: deps.config.num('CHALK_OUTPUT_CAP_MB') } : {}),
  });
  return { ending, base };
}
