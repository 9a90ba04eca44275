import { writeHostFile } from '../../fs/host-file.js';
import type { AgentResult, LoopAnswer } from '../../ports/agent.js';
import { SANDBOX_PATHS } from '../../ports/sandbox.js';
import { noteEgress } from '../base/egress.js';
import type { LoopPlan, Run } from '../base/run.js';
import { SYSTEM_PROMPT } from '../base/session.js';

export interface LoopCall {
  result: AgentResult<LoopAnswer>;
  /** The validated answer, or null when there was none. */
  answer: LoopAnswer | null;
  /** When the call started (clock ms). */
  startedAt: number;
}

/**
 * The loop's agent call in the sandbox (which first ends whatever earlier
 * commands left running: SandboxSession.exec), then every process the agent
 * left is ended (nothing it started runs beside the rubric or reads what comes
 * next); its answer and stderr are kept in io/.
 */
export async function callStep(run: Run, plan: LoopPlan, prompt: string): Promise<LoopCall> {
  const { ctx, deps, session } = run;
  const startedAt = deps.clock.now().getTime();
  const result = await deps.agent.call(plan.mode, prompt, {
    where: session,
    systemPromptFile: `${SANDBOX_PATHS.io}/${SYSTEM_PROMPT}`,
    cwd: SANDBOX_PATHS.repo,
    signal: run.signal,
  });
  await session.reapStrays();
  await noteEgress({ session, path: ctx.paths.egress, log: run.log, phase: `loop ${plan.loop} (agent)` });
  writeHostFile(ctx.paths.loopJson, result.raw);
  writeHostFile(ctx.paths.loopErr, result.stderr);
  return { result, answer: result.answer === 'none' ? null : result.answer, startedAt };
}
