import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentResult, AnswerOf } from '../../ports/agent.js';
import { SANDBOX_PATHS, type SandboxSession } from '../../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import { noteEgress } from './egress.js';
import { callRecord } from './record.js';

type CheckKind = 'spec-check' | 'review' | 'distill';

export interface ReadOnlyCallResult<K extends CheckKind> {
  result: AgentResult<AnswerOf[K]>;
  /** The validated answer, or null when there was none. */
  answer: AnswerOf[K] | null;
  /** `pass`, `fail` or `none` (a distillation has none). */
  verdict: 'pass' | 'fail' | 'none';
}

/**
 * A read-only call (spec check, final review, distillation) done the same way each time:
 * the prompt kept in io/, the call, its answer and stderr kept in io/, what it left
 * running ended and the tree put back as it was before the call (whatever the call left is
 * discarded), and one `runs` row at loop 0
 * whose status is the verdict (or what `statusOf` says of the answer).
 */
export async function readOnlyCall<K extends CheckKind>(
  kind: K,
  prompt: string,
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  opts: {
    runId: string;
    model: string;
    signal?: AbortSignal;
    /** The recorded `agent_status` for the answer (default: its verdict). */
    statusOf?: (answer: AnswerOf[K] | null) => string;
  },
): Promise<ReadOnlyCallResult<K>> {
  writeFileSync(join(ctx.paths.io, `${kind}.prompt.md`), prompt);
  const before = await session.treeId();
  const result = await deps.agent.call(kind, prompt, {
    where: session,
    systemPromptFile: `${SANDBOX_PATHS.io}/system.md`,
    cwd: SANDBOX_PATHS.repo,
    signal: opts.signal,
  });
  writeFileSync(join(ctx.paths.io, `${kind}.json`), result.raw);
  writeFileSync(join(ctx.paths.io, `${kind}.err`), result.stderr);
  // Nothing the call started runs beside the restore or what comes next.
  await session.reapStrays();
  // What the call left goes; what the setup made before it stays (the tree as it was).
  if (before === null) await session.reset();
  else await session.restoreTree(before).catch(() => session.reset());
  await noteEgress({ session, path: ctx.paths.egress, log: deps.log.child(`[${ctx.ticket}] `), phase: kind });
  const answer = result.answer === 'none' ? null : result.answer;
  const verdict = answer && 'verdict' in answer ? answer.verdict : 'none';
  await deps.store.calls.record(
    callRecord(ctx, result, {
      loop: 0,
      kind,
      agentStatus: opts.statusOf ? opts.statusOf(answer) : verdict,
      rubricExit: 0,
      progressed: false,
      budgetUsd: deps.config.num('CHALK_BUDGET_USD'),
      lessons: 0,
      runId: opts.runId,
      fpRules: deps.config.str('CHALK_FP_RULES'),
      model: opts.model,
    }),
  );
  return { result, answer, verdict };
}
