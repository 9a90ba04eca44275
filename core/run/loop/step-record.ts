import { denialNote } from '../../agent/denials.js';
import type { EnvironmentFailure } from '../../fingerprint/environment.js';
import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import type { Verdict } from '../../fingerprint/verdict.js';
import type { PromptLesson } from '../../kernel/hooks.js';
import { callRecord, loopLine } from '../base/record.js';
import type { LoopPlan, Run } from '../base/run.js';
import type { LoopCall } from './step-call.js';

export interface LoopRow {
  /** `blocked`, or the agent's status. */
  agentStatus: string;
  /** null when no rubric ran (a blocked loop records 0). */
  rubricExit: number | null;
  /** How a limit or the sandbox ended the rubric, said instead of its exit code. */
  rubricEnding?: string | null;
  progressed: boolean;
  fingerprint?: Fingerprint | null;
  verdict: Verdict | null;
  /** Tests that failed one rubric run and passed the other on the same tree. */
  flakyTests?: string[];
  /** The lessons the prompt carried (those with an id are recorded with the row). */
  lessons: readonly PromptLesson[];
  /** How long the agent and the rubric took, shown apart; absent for a blocked loop (no rubric). */
  times?: { agentMs: number; rubricMs: number };
  /** The rubric could not start (a missing command): said instead of unknown failing tests. */
  environment?: EnvironmentFailure | null;
}

/** The lessons given to a loop, recorded against its `runs` row; best effort (the row itself is what counts). */
async function recordRecalls(run: Run, plan: LoopPlan, callId: number, lessons: readonly PromptLesson[]) {
  const given = lessons.flatMap((l) => (l.id === undefined ? [] : [{ lessonId: l.id, how: l.how ?? 'other' }]));
  if (given.length === 0) return;
  try {
    await run.deps.store.lessons.recordRecalls({ callId, runId: run.id, loop: plan.loop, lessons: given });
  } catch (err) {
    run.log.warn(
      `could not record which lessons loop ${plan.loop} was given: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The loop's `runs` row and the lessons it was given, then its summary line (and the denial note) in the log; returns the row's id. */
export async function recordStep(run: Run, plan: LoopPlan, call: LoopCall, row: LoopRow): Promise<number> {
  const { ctx, deps } = run;
  const { config } = deps;
  const { result, answer } = call;
  const id = await deps.store.calls.record(
    callRecord(ctx, result, {
      loop: plan.loop,
      kind: plan.mode,
      budgetUsd: config.num('CHALK_BUDGET_USD'),
      lessons: row.lessons.length,
      runId: run.id,
      fpRules: run.rules,
      model: config.str('CHALK_MODEL'),
      agentStatus: row.agentStatus,
      rubricExit: row.rubricExit ?? 0,
      progressed: row.progressed,
      ...(row.fingerprint !== undefined ? { fingerprint: row.fingerprint } : {}),
      verdict: row.verdict,
      ...(row.flakyTests ? { flakyTests: row.flakyTests } : {}),
    }),
  );
  await recordRecalls(run, plan, id, row.lessons);
  const agentMs = row.times ? row.times.agentMs : deps.clock.now().getTime() - call.startedAt;
  run.log.info(loopLine({ loop: plan.loop, mode: plan.mode, result, agentMs, row, summary: answer?.summary }));
  const note = denialNote(result, ctx.paths.loopJson);
  if (note) run.log.info(note);
  return id;
}
