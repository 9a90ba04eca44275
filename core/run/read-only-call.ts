import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentResult, AnswerOf } from '../ports/agent.js';
import { SANDBOX_PATHS, type SandboxSession } from '../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import { callRecord } from './record.js';

type CheckKind = 'spec-check' | 'review';

export interface ReadOnlyCallResult<K extends CheckKind> {
  result: AgentResult<AnswerOf[K]>;
  /** The validated answer, or null when there was none. */
  answer: AnswerOf[K] | null;
  /** `pass`, `fail` or `none`, as recorded in `agent_status`. */
  verdict: 'pass' | 'fail' | 'none';
}

/**
 * A read-only check (spec check or final review) done the same way each time:
 * the prompt kept in io/, the call, its answer and stderr kept in io/, the tree
 * reset (whatever the call left is discarded), and one `runs` row at loop 0
 * whose status is the verdict.
 */
export async function readOnlyCall<K extends CheckKind>(
  kind: K,
  prompt: string,
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  opts: { runId: string; model: string; signal?: AbortSignal },
): Promise<ReadOnlyCallResult<K>> {
  writeFileSync(join(ctx.paths.io, `${kind}.prompt.md`), prompt);
  const result = await deps.agent.call(kind, prompt, {
    where: session,
    systemPromptFile: `${SANDBOX_PATHS.io}/system.md`,
    cwd: SANDBOX_PATHS.repo,
    signal: opts.signal,
  });
  writeFileSync(join(ctx.paths.io, `${kind}.json`), result.raw);
  writeFileSync(join(ctx.paths.io, `${kind}.err`), result.stderr);
  await session.reset();
  const answer = result.answer === 'none' ? null : result.answer;
  const verdict = answer?.verdict ?? 'none';
  await deps.store.calls.record(
    callRecord(ctx, result, {
      loop: 0,
      kind,
      agentStatus: verdict,
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
