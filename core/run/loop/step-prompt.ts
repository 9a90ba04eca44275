import { readFileSync } from 'node:fs';
import { writeHostFile } from '../../fs/host-file.js';
import type { PromptLesson } from '../../kernel/hooks.js';
import { recallKey } from '../../memory/key.js';
import type { HostBudget } from '../../ports/decider.js';
import { FAILING_BEFORE, failingBefore, loopPromptContext, renderLoopPrompt } from '../base/prompt.js';
import type { LoopPlan, Run } from '../base/run.js';

export interface LoopPrompt {
  prompt: string;
  /** The lessons the prompt carries (after `beforePrompt`). */
  lessons: readonly PromptLesson[];
}

/**
 * The loop's prompt: feedback, findings and the recall key from the Run, through `beforePrompt`
 * (whose `lesson-memory` tap asks the LessonMemory, within the loop's host-service budget), kept in io/.
 */
export async function promptStep(run: Run, plan: LoopPlan, budget: HostBudget): Promise<LoopPrompt> {
  const { ctx, deps } = run;
  const spec = run.recallFrom ? '' : readFileSync(ctx.specPath, 'utf8');
  const input = {
    ticket: ctx.ticket,
    loop: plan.loop,
    mode: plan.mode,
    rubricCommand: ctx.rubricCommand,
    repo: ctx.repo,
    runId: run.id,
    recall: recallKey({ repo: ctx.repo, spec, failure: run.recallFrom }),
    findings: run.state.findings,
    failure: run.state.feedback,
  };
  const start = loopPromptContext(input, ctx.prompts);
  if (run.baseline) start.sections.push({ title: FAILING_BEFORE, body: failingBefore(run.baseline) });
  const hooked = await deps.hooks.beforePrompt.promise({
    ...start,
    budget,
    decisionsFile: ctx.paths.decisions,
  });
  const prompt = renderLoopPrompt(hooked, input);
  writeHostFile(ctx.paths.prompt, prompt);
  run.log.info(`loop ${plan.loop} (${plan.mode}) started`);
  return { prompt, lessons: hooked.lessons };
}
