import { describeEnvironment, type EnvironmentFailure } from '../../fingerprint/environment.js';
import { type Fingerprint, UNKNOWN_TESTS_LINE } from '../../fingerprint/fingerprint.js';
import type { Verdict } from '../../fingerprint/verdict.js';
import type { AgentResult } from '../../ports/agent.js';
import type { CallRecord } from '../../ports/store.js';
import { oneLine, quoted } from '../../text/model.js';
import { usd } from '../../text/money.js';
import type { RunContext } from './context.js';

/** What one call adds to its `runs` row beyond the agent's result. */
export interface CallFacts {
  loop: number;
  kind: string;
  agentStatus: string;
  rubricExit: number;
  progressed: boolean;
  budgetUsd: number;
  lessons: number;
  runId: string;
  fpRules: string;
  fingerprint?: Fingerprint | null;
  verdict?: Verdict | null;
  /** Tests that failed one rubric run and passed the other on the same tree. */
  flakyTests?: string[];
  /** The model to record when the result names none. */
  model?: string;
  /** Whole seconds the call took, when measured by the caller (else the result's duration). */
  durationS?: number;
}

/** The `runs` row of one agent call: every column filled from the result and the facts. */
export function callRecord(ctx: RunContext, result: AgentResult, f: CallFacts): CallRecord {
  const fp = f.fpRules === 'off' ? null : (f.fingerprint ?? null);
  return {
    repo: ctx.repo,
    ticket: ctx.ticket,
    branch: ctx.branch,
    loop: f.loop,
    kind: f.kind,
    agentStatus: f.agentStatus,
    rubricExit: f.rubricExit,
    progressed: f.progressed,
    model: result.model || f.model || 'default',
    prompts: ctx.promptHash,
    costUsd: Math.round(result.costUsd * 10_000) / 10_000,
    budgetUsd: f.budgetUsd,
    durationS: f.durationS ?? Math.round(result.durationMs / 1000),
    inputTokens: result.usage.inputTokens,
    outputTokens: result.usage.outputTokens,
    cacheReadTokens: result.usage.cacheReadTokens,
    cacheWriteTokens: result.usage.cacheCreationTokens,
    turns: result.usage.turns,
    denials: result.denials.length,
    lessons: f.lessons,
    runId: f.runId,
    testsHash: fp?.testsHash ?? null,
    failing: fp?.failing ?? null,
    failingTests: fp?.tests ?? null,
    firstError: fp && fp.rubric === 'failed' && fp.firstError !== '' ? fp.firstError : null,
    treeId: fp && fp.treeId !== '' ? fp.treeId : null,
    verdict: f.fpRules === 'off' ? null : (f.verdict ?? null),
    fpRules: f.fpRules,
    flakyTests: f.fpRules === 'off' || !f.flakyTests || f.flakyTests.length === 0 ? null : f.flakyTests,
  };
}

/** Money as the log shows it. */
export { usd };
/** A duration in whole seconds as the log shows it. */
export const secs = (ms: number) => `${Math.round(ms / 1000)}s`;

/**
 * A loop's summary line: `loop 2 (retry): agent ok ($0.42, 48s), rubric exit 1 in 27s, ...`, the
 * agent's and the rubric's times apart. A call or a rubric that a limit or the sandbox ended says
 * how (`agent timed out after 3600 s (CHALK_AGENT_TIMEOUT) (no result: counted as $1.00, 3600s)`,
 * `rubric was killed: ... (12s)`); a call without a result of its own says what it was counted
 * at. A rubric that could not start names its missing command; failing tests nobody could read
 * are unknown; tests that failed only once are flaky, not unknown.
 */
export function loopLine(o: {
  loop: number;
  mode: string;
  result: Pick<AgentResult, 'costUsd' | 'costUnknown' | 'ending'>;
  agentMs: number;
  row: {
    agentStatus: string;
    rubricExit: number | null;
    rubricEnding?: string | null;
    fingerprint?: Fingerprint | null;
    flakyTests?: string[];
    times?: { rubricMs: number };
    environment?: EnvironmentFailure | null;
  };
  summary?: string | undefined;
}): string {
  const { row, result } = o;
  const flaky = row.flakyTests ?? [];
  const tests = row.environment
    ? `, ${describeEnvironment(row.environment)}`
    : flaky.length > 0
      ? `, flaky: ${flaky.map((t) => oneLine(t, 200)).join(', ')}`
      : row.fingerprint?.rubric === 'failed' && row.fingerprint.tests === null
        ? `, ${UNKNOWN_TESTS_LINE}`
        : '';
  const rubricMs = row.times ? secs(row.times.rubricMs) : null;
  const rubric =
    row.rubricExit === null
      ? ''
      : row.rubricEnding
        ? `, rubric ${row.rubricEnding}${rubricMs ? ` (${rubricMs})` : ''}`
        : `, rubric exit ${row.rubricExit}${rubricMs ? ` in ${rubricMs}` : ''}`;
  const cost = result.costUnknown ? `no result: counted as ${usd(result.costUsd)}` : usd(result.costUsd);
  return (
    `loop ${o.loop} (${o.mode}): agent ${result.ending ?? row.agentStatus} (${cost}, ${secs(o.agentMs)})` +
    `${rubric}${tests}.${o.summary?.trim() ? ` summary: ${quoted(o.summary)}` : ''}`
  );
}
