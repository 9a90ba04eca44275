import { z } from 'zod';
import { timedOutNote } from '../config/limits.js';
import type { AgentResult, AgentUsage, AnswerOf, CallKind, PermissionDenial } from '../ports/agent.js';
import { parseAnswer } from './schemas.js';

/**
 * Reads the CLI's `--output-format json` result object. Every field is
 * optional: a missing or malformed value gives a zero or `none`, never a throw.
 */

const count = z.number().finite().nonnegative().catch(0);

const resultJson = z.looseObject({
  is_error: z.boolean().catch(false),
  subtype: z.string().optional().catch(undefined),
  total_cost_usd: count,
  num_turns: count,
  structured_output: z.unknown().optional(),
  usage: z
    .looseObject({
      input_tokens: count,
      output_tokens: count,
      cache_read_input_tokens: count,
      cache_creation_input_tokens: count,
    })
    .catch({ input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }),
  modelUsage: z
    .record(
      z.string(),
      z
        .looseObject({
          costUSD: count,
          inputTokens: count,
          outputTokens: count,
          cacheReadInputTokens: count,
          cacheCreationInputTokens: count,
        })
        .catch({ costUSD: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }),
    )
    .catch({}),
  permission_denials: z
    .array(z.looseObject({ tool_name: z.string().catch('unknown'), tool_input: z.unknown() }))
    .catch([]),
});

export interface RawRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The call was stopped at its timeout (`timeoutS` seconds, CHALK_AGENT_TIMEOUT). */
  timedOut?: boolean;
  timeoutS?: number;
  /** The CLI printed past the output cap and was stopped. */
  outputCapped?: boolean;
  /** The sandbox's words for why it ended the CLI (ExecResult.killedBy). */
  killedBy?: string;
}

/** The CLI could not start (no such command, not executable): it spent nothing. */
const NEVER_STARTED = new Set([126, 127]);

/** How a limit or the sandbox ended a call that gave no result, as its status and in words. */
function endingOf(run: RawRun): { status: string; ending?: string } {
  if (run.timedOut) return { status: 'timed_out', ending: timedOutNote('CHALK_AGENT_TIMEOUT', run.timeoutS ?? 0) };
  if (run.outputCapped) {
    return { status: 'output_capped', ending: 'printed more than CHALK_OUTPUT_CAP_MB of output and was stopped' };
  }
  if (run.killedBy) return { status: 'killed', ending: `was killed: ${run.killedBy}` };
  return { status: 'error' };
}

const ZERO_USAGE: AgentUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  turns: 0,
};

/** The CLI prints one JSON object; tolerate noise around it by reading the last line that parses. */
function lastJsonObject(stdout: string): unknown {
  const lines = stdout.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim() ?? '';
    if (!line.startsWith('{')) continue;
    try {
      return JSON.parse(line);
    } catch {}
  }
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** The model that did the most (highest cost) of the work. */
function answeringModel(modelUsage: ModelUsage): string {
  let best = '';
  let cost = -1;
  for (const [name, u] of Object.entries(modelUsage)) {
    if (u.costUSD > cost) {
      best = name;
      cost = u.costUSD;
    }
  }
  return best;
}

type ModelUsage = z.infer<typeof resultJson>['modelUsage'];

/**
 * Tokens from `.usage`; when that is all zero (the CLI zeroes it on a budget
 * stop) the per-model counts are summed instead.
 */
function tokens(r: z.infer<typeof resultJson>): Omit<AgentUsage, 'turns'> {
  const u = r.usage;
  const fromUsage = {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: u.cache_read_input_tokens,
    cacheCreationTokens: u.cache_creation_input_tokens,
  };
  if (Object.values(fromUsage).some((n) => n > 0)) return fromUsage;
  const sum = (f: (m: ModelUsage[string]) => number) => Object.values(r.modelUsage).reduce((a, m) => a + f(m), 0);
  return {
    inputTokens: sum((m) => m.inputTokens),
    outputTokens: sum((m) => m.outputTokens),
    cacheReadTokens: sum((m) => m.cacheReadInputTokens),
    cacheCreationTokens: sum((m) => m.cacheCreationInputTokens),
  };
}

/**
 * The call's result as the CLI wrote it. Only the CLI writes what is read
 * here (the sandbox starts it so: SandboxSession.exec), so its result line
 * decides the answer and the cost. A call with no readable result (killed,
 * timed out, cut off) is counted at `capUsd`, the most it could have spent,
 * unless the CLI never started.
 */
export function parseResult<K extends CallKind>(
  kind: K,
  run: RawRun,
  requestedModel: string,
  opts: { capUsd?: number } = {},
): AgentResult<AnswerOf[K]> {
  const base = {
    exitCode: run.exitCode,
    raw: run.stdout,
    stderr: run.stderr,
    durationMs: run.durationMs,
  };
  const parsed = resultJson.safeParse(lastJsonObject(run.stdout));
  if (!parsed.success) {
    const unknown = !NEVER_STARTED.has(run.exitCode);
    return {
      ...base,
      answer: 'none',
      ...endingOf(run),
      costUsd: unknown ? (opts.capUsd ?? 0) : 0,
      ...(unknown ? { costUnknown: true } : {}),
      usage: ZERO_USAGE,
      denials: [],
      model: requestedModel || 'default',
    };
  }
  const r = parsed.data;
  let status = run.exitCode === 0 ? 'ok' : 'error';
  if (r.is_error) status = r.subtype && /^[a-z_]+$/.test(r.subtype) ? r.subtype : 'error';
  const denials: PermissionDenial[] = r.permission_denials.map((d) => ({ tool: d.tool_name, input: d.tool_input }));
  return {
    ...base,
    answer: parseAnswer(kind, r.structured_output),
    status,
    costUsd: r.total_cost_usd,
    usage: { ...tokens(r), turns: r.num_turns },
    denials,
    model: answeringModel(r.modelUsage) || requestedModel || 'default',
  };
}

/** Cost as the database keeps it: four decimals. */
export const costText = (usd: number): string => usd.toFixed(4);

/** Cost for people: `$0.42`, or `<$0.01` for a non-zero amount that rounds to nothing. */
export function formatUsd(usd: number): string {
  if (!Number.isFinite(usd)) return `$${String(usd)}`;
  const s = usd.toFixed(2);
  return s === '0.00' && usd > 0 ? '<$0.01' : `$${s}`;
}
