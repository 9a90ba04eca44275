import type { ExecOptions, ExecResult } from './sandbox.js';

/**
 * The coding agent (the `claude` CLI) as the loop sees it: one call per kind,
 * each answering with a structured object, run wherever the caller says
 * (a sandbox session: no agent call runs on the host, fleet planning included).
 */
/** The calls that do a loop's work (write access, a loop number): the one list of them. */
export const LOOP_KINDS = ['continue', 'retry', 'fix-review'] as const;
export type LoopKind = (typeof LOOP_KINDS)[number];
/** Every call the agent answers, loops first; core/setup/prompts.ts names each one's prompt. */
export const CALL_KINDS = [...LOOP_KINDS, 'spec-check', 'review', 'distill', 'plan'] as const;
export type CallKind = (typeof CALL_KINDS)[number];

export function isLoopKind(kind: string): kind is LoopKind {
  return (LOOP_KINDS as readonly string[]).includes(kind);
}

export interface LoopAnswer {
  status: 'done' | 'blocked';
  checkpoint?: string;
  summary: string;
  blocker?: string;
}

export interface SpecAnswer {
  verdict: 'pass' | 'fail';
  problems: { checkpoint: string; problem: string; suggestion?: string }[];
}

export interface ReviewAnswer {
  verdict: 'pass' | 'fail';
  summary: string;
  findings: { severity: 'blocker' | 'minor'; file?: string; issue: string }[];
}

export interface LessonAnswer {
  lesson: string;
  scope: 'general' | 'repo' | 'none';
}

export interface PlanAnswer {
  workstreams: { ticket: string; title: string; context?: string; checkpoints: string[] }[];
}

export interface AnswerOf {
  continue: LoopAnswer;
  retry: LoopAnswer;
  'fix-review': LoopAnswer;
  'spec-check': SpecAnswer;
  review: ReviewAnswer;
  distill: LessonAnswer;
  plan: PlanAnswer;
}

export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  turns: number;
}

/** An action the CLI's permission checks refused. */
export interface PermissionDenial {
  tool: string;
  input: unknown;
}

export interface AgentResult<A = unknown> {
  /** The validated structured answer, or `none` when it is missing or malformed. */
  answer: A | 'none';
  /**
   * `ok`, the CLI's error subtype (e.g. `error_max_turns`, `error_max_budget_usd`), `error`
   * (non-zero exit), or how a limit or the sandbox ended a call that gave no result
   * (`timed_out`, `output_capped`, `killed`).
   */
  status: string;
  /** What the CLI's own result says the call cost; the call's cap when it gave none (`costUnknown`). */
  costUsd: number;
  /**
   * The CLI wrote no result of its own (it was killed, timed out, or its output was
   * unreadable): what the call spent is unknown, and `costUsd` is the most it could
   * have spent (CHALK_BUDGET_USD), so a budget never counts it as free.
   */
  costUnknown?: boolean;
  /** How a limit or the sandbox ended a call that gave no result (`timed out after 3600 s (CHALK_AGENT_TIMEOUT)`). */
  ending?: string;
  usage: AgentUsage;
  denials: PermissionDenial[];
  /** The model that answered (highest cost in the result), else the requested one, else `default`. */
  model: string;
  exitCode: number;
  /** The CLI's stdout (its result JSON), for the run's io directory. */
  raw: string;
  stderr: string;
  durationMs: number;
}

/** Where the CLI runs: a sandbox session (any Sandbox implementation); never the host. */
export interface AgentHost {
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
}

export interface AgentCallOptions {
  where: AgentHost;
  /** The system prompt file as the CLI sees it (e.g. /chalk/system.md in a sandbox); none for `plan`. */
  systemPromptFile?: string;
  /** Working directory of the CLI (e.g. /work/repo in a sandbox). */
  cwd?: string;
  /** Overrides the kind's configured model. */
  model?: string;
  signal?: AbortSignal;
  onOutput?: ExecOptions['onOutput'];
}

export interface Agent {
  call<K extends CallKind>(kind: K, prompt: string, opts: AgentCallOptions): Promise<AgentResult<AnswerOf[K]>>;
  /**
   * The model a call of this kind asks for when the caller names none ('' for
   * the provider's default), so the core can record a call it cut short
   * without knowing how a provider picks its models.
   */
  modelFor(kind: CallKind): string;
  /**
   * Whether this agent can run with the environment a run is given: null when it can, else one
   * line saying what to supply (the credential it reads, say). Asked before a run starts
   * anything; the core knows no agent's credentials.
   */
  cannotRun(env: NodeJS.ProcessEnv): string | null;
}

/**
 * Runs one command in a throwaway container of the sandbox image (no clone, no
 * mounts), with the agent credentials, removed afterwards. A Sandbox
 * implementation that offers it lets `chalk doctor` ask the CLI in the image
 * which permission mode a loop would start in.
 */
export interface OneShotRunner {
  runOnce(argv: string[], opts: { stdin?: string; timeoutMs?: number }): Promise<ExecResult>;
}

export function isOneShotRunner(x: unknown): x is OneShotRunner {
  return typeof (x as Partial<OneShotRunner> | null)?.runOnce === 'function';
}
