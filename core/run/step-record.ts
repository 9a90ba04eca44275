import { denialNote } from '../agent/denials.js';
import { type Fingerprint, UNKNOWN_TESTS_LINE } from '../fingerprint/fingerprint.js';
import type { Verdict } from '../fingerprint/verdict.js';
import { callRecord, secs, usd } from './record.js';
import type { LoopPlan, Run } from './run.js';
import type { LoopCall } from './step-call.js';

export interface LoopRow {
  /** `blocked`, or the agent's status. */
  agentStatus: string;
  /** null when no rubric ran (a blocked loop records 0). */
  rubricExit: number | null;
  progressed: boolean;
  fingerprint?: Fingerprint | null;
  verdict: Verdict | null;
  /** Tests that failed one rubric run and passed the other on the same tree. */
  flakyTests?: string[];
  /** Lessons the prompt carried. */
  lessons: number;
}

/** The loop's `runs` row, then its summary line (and the denial note) in the log; returns the row's id. */
export async function recordStep(run: Run, plan: LoopPlan, call: LoopCall, row: LoopRow): Promise<number> {
  const { ctx, deps } = run;
  const { config } = deps;
  const { result, answer } = call;
  const id = await deps.store.calls.record(
    callRecord(ctx, result, {
      loop: plan.loop,
      kind: plan.mode,
      budgetUsd: config.num('CHALK_BUDGET_USD'),
      lessons: row.lessons,
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
  // Failing tests nobody could read are unknown; tests that failed only once are flaky, not unknown.
  const flaky = row.flakyTests ?? [];
  const unknown =
    flaky.length > 0
      ? `, flaky: ${flaky.join(', ')}`
      : row.fingerprint?.rubric === 'failed' && row.fingerprint.tests === null
        ? `, ${UNKNOWN_TESTS_LINE}`
        : '';
  const took = secs(deps.clock.now().getTime() - call.startedAt);
  run.log.info(
    `loop ${plan.loop} (${plan.mode}): agent ${row.agentStatus} (${usd(result.costUsd)}, ${took})` +
      `${row.rubricExit === null ? '' : `, rubric exit ${row.rubricExit}`}${unknown}.${answer?.summary ? ` ${answer.summary}` : ''}`,
  );
  const note = denialNote(result, ctx.paths.loopJson);
  if (note) run.log.info(note);
  return id;
}
