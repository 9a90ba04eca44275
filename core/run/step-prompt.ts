import { writeHostFile } from '../fs/host-file.js';
import { loopPromptContext, renderLoopPrompt } from './prompt.js';
import type { LoopPlan, Run } from './run.js';

export interface LoopPrompt {
  prompt: string;
  /** How many lessons the prompt carries (after `beforePrompt`). */
  lessons: number;
}

/** The loop's prompt: feedback, findings and lessons from the Run, through `beforePrompt`, kept in io/. */
export async function promptStep(run: Run, plan: LoopPlan): Promise<LoopPrompt> {
  const { ctx, deps } = run;
  const input = {
    ticket: ctx.ticket,
    loop: plan.loop,
    mode: plan.mode,
    rubricCommand: ctx.rubricCommand,
    lessons: run.lessons,
    findings: run.state.findings,
    failure: run.state.feedback,
  };
  const hooked = await deps.hooks.beforePrompt.promise(loopPromptContext(input, ctx.prompts));
  const prompt = renderLoopPrompt(hooked, input);
  writeHostFile(ctx.paths.prompt, prompt);
  run.log.info(`loop ${plan.loop} (${plan.mode}) started`);
  return { prompt, lessons: hooked.lessons.length };
}
