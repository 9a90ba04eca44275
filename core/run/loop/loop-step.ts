import { LoopBudget } from '../../decision/budget.js';
import type { EnvironmentFailure } from '../../fingerprint/environment.js';
import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import type { Judgement } from '../../fingerprint/streak.js';
import type { StopRequest } from '../../kernel/hooks.js';
import type { AgentResult } from '../../ports/agent.js';
import type { LoopEnding } from '../base/policy.js';
import type { LoopPlan, Run } from '../base/run.js';
import { callStep } from './step-call.js';
import { landStep } from './step-land.js';
import { promptStep } from './step-prompt.js';
import { recordStep } from './step-record.js';
import { fingerprintTreesAfter, rubricStep } from './step-rubric.js';
import { hookFingerprint, judgeStep, verdictStep } from './step-verdict.js';

export type LoopResult =
  | { kind: 'blocked'; detail: string; result: AgentResult }
  | {
      kind: 'judged';
      ending: LoopEnding;
      fingerprint: Fingerprint | null;
      judgement: Judgement;
      /** A deciding tap asked to stop the run. */
      stop: StopRequest | undefined;
      /** deja_vu: the ticket whose open detention fails the same way. */
      openTicket: string | null;
      /** The host HEAD after the loop (moved when a green loop came home). */
      base: string;
      result: AgentResult;
      /** The rubric could not start: the run detains at once (`environment`). */
      environment: EnvironmentFailure | null;
    };

/**
 * One loop: the prompt (through `beforePrompt`), the agent call, then, unless
 * the agent reported a blocker, the harness's own rubric run and fingerprint,
 * the commit and fast-forward of green work, the verdict, `afterRubric`, the
 * `runs` row, and `onVerdict`. Each step is its own function taking the Run.
 * The loop owns one budget for the host services (LoopBudget, 2 s of calls,
 * its clock paused between the prompt's recall and the stuck question) and
 * hands it to every step that calls one.
 */
export async function runLoop(run: Run, plan: LoopPlan): Promise<LoopResult> {
  // The loop's one budget for the host services, shared by every step that calls one.
  const budget = new LoopBudget();
  const { prompt, lessons } = await promptStep(run, plan, budget);
  // What the recall spent stays spent; the agent's time is not the host services'.
  budget.pause();
  const before = await run.work.snapshot();
  const call = await callStep(run, plan, prompt);
  // The fingerprint's trees, taken once after the call: the whole tree is also what the agent left.
  const trees = await fingerprintTreesAfter(run, call);
  await run.work.adopt(before, trees ? trees.whole : undefined);

  if (call.answer?.status === 'blocked') {
    const judgement = run.streak.judge('blocked', null);
    await recordStep(run, plan, call, {
      agentStatus: 'blocked',
      rubricExit: null,
      progressed: false,
      verdict: judgement.verdict,
      lessons,
    });
    return { kind: 'blocked', detail: call.answer.blocker?.trim() || call.answer.summary, result: call.result };
  }

  const agentMs = run.deps.clock.now().getTime() - call.startedAt;
  const rubric = await rubricStep(run, trees);
  const { fingerprint } = rubric;
  const { ending, base } = await landStep(run, plan, call, rubric);
  const judged = await judgeStep(run, ending, fingerprint);
  await run.deps.hooks.afterRubric.promise({
    ticket: run.ctx.ticket,
    loop: plan.loop,
    exitCode: rubric.rubric.exitCode,
    passed: rubric.green,
    fingerprint: hookFingerprint(fingerprint),
  });
  const callId = await recordStep(run, plan, call, {
    agentStatus: call.result.status,
    rubricExit: rubric.rubric.exitCode,
    rubricEnding: rubric.rubric.ending,
    progressed: ending.ended === 'progressed',
    fingerprint,
    verdict: judged.judgement.verdict,
    flakyTests: rubric.flaky,
    lessons,
    times: { agentMs, rubricMs: rubric.ms },
    environment: rubric.environment,
  });
  const totalMs = run.deps.clock.now().getTime() - call.startedAt;
  run.log.debug(
    `loop ${plan.loop} took ${totalMs} ms: agent ${agentMs} ms, rubric ${rubric.ms} ms` +
      `${rubric.rerunMs === null ? '' : `, rubric again ${rubric.rerunMs} ms`}, harness ${totalMs - agentMs - rubric.ms - (rubric.rerunMs ?? 0)} ms`,
  );
  const stop = await verdictStep(run, plan, { judged, ending, fingerprint, callId, budget });
  return {
    kind: 'judged',
    ending,
    fingerprint,
    judgement: judged.judgement,
    stop,
    openTicket: judged.openTicket,
    base,
    result: call.result,
    environment: rubric.environment,
  };
}
