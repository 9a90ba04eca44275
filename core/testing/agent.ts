import type { Agent, AgentCallOptions, AgentResult, AnswerOf, CallKind, PermissionDenial } from '../ports/agent.js';
import type { ExecOptions, ExecResult } from '../ports/sandbox.js';

/** What a scripted step can do: act where the call runs, through exec, as the real agent would. */
export interface AgentStepContext {
  kind: CallKind;
  prompt: string;
  /** Runs a command where the call runs (a sandbox session), in the call's working directory. */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Writes a file (relative to the call's working directory) through exec; throws when it fails. */
  write(path: string, content: string): Promise<void>;
  /** The call's signal: a step that waits should honour it. */
  signal?: AbortSignal;
}

/** What a step answers: the structured answer (or `none`) and what the call cost. */
export interface AgentStepResult<A = unknown> {
  answer: A | 'none';
  /** Default `ok`. */
  status?: string;
  costUsd?: number;
  denials?: PermissionDenial[];
  turns?: number;
}

export type AgentStep<K extends CallKind = CallKind> = (
  c: AgentStepContext,
) => AgentStepResult<AnswerOf[K]> | Promise<AgentStepResult<AnswerOf[K]>>;

/** One call as the scripted agent saw it. */
export interface ScriptedCall {
  kind: CallKind;
  prompt: string;
  model: string | undefined;
  cwd: string | undefined;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The Agent port with a queue of steps per call kind: each call takes the next
 * step of its kind, which acts on the session (exec, write) and says what the
 * agent answered and cost. A call with no step left fails the test loudly.
 */
export class ScriptedAgent implements Agent {
  readonly calls: ScriptedCall[] = [];
  private readonly queues = new Map<CallKind, AgentStep[]>();

  /** `models`: the model each kind is configured with (default `scripted`). */
  constructor(private readonly models: Partial<Record<CallKind, string>> = {}) {}

  modelFor(kind: CallKind): string {
    return this.models[kind] ?? 'scripted';
  }

  /** A scripted agent needs nothing to run. */
  cannotRun(_env: NodeJS.ProcessEnv): string | null {
    return null;
  }

  /** Appends steps for calls of `kind`, taken in order. */
  script<K extends CallKind>(kind: K, ...steps: AgentStep<K>[]): this {
    const q = this.queues.get(kind) ?? [];
    q.push(...(steps as AgentStep[]));
    this.queues.set(kind, q);
    return this;
  }

  /** Steps not taken yet, per kind. */
  remaining(): Partial<Record<CallKind, number>> {
    return Object.fromEntries([...this.queues].filter(([, q]) => q.length > 0).map(([k, q]) => [k, q.length]));
  }

  async call<K extends CallKind>(kind: K, prompt: string, opts: AgentCallOptions): Promise<AgentResult<AnswerOf[K]>> {
    this.calls.push({ kind, prompt, model: opts.model, cwd: opts.cwd });
    const step = this.queues.get(kind)?.shift();
    if (!step) throw new Error(`scripted agent: no step left for a '${kind}' call (call ${this.calls.length})`);
    opts.signal?.throwIfAborted();
    const started = Date.now();
    const on = (o?: ExecOptions): ExecOptions => ({
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...o,
    });
    const ctx: AgentStepContext = {
      kind,
      prompt,
      exec: (command, o) => opts.where.exec(command, on(o)),
      write: async (path, content) => {
        const r = await opts.where.exec(`mkdir -p -- "$(dirname -- ${quote(path)})" && cat > ${quote(path)}`, {
          ...on(),
          stdin: content,
        });
        if (r.exitCode !== 0) throw new Error(`scripted agent: could not write ${path}: ${r.stderr.trim()}`);
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    const r = (await step(ctx)) as AgentStepResult<AnswerOf[K]>;
    const status = r.status ?? 'ok';
    const costUsd = r.costUsd ?? 0;
    const raw = JSON.stringify({
      type: 'result',
      subtype: status === 'ok' ? 'success' : status,
      total_cost_usd: costUsd,
      structured_output: r.answer === 'none' ? null : r.answer,
    });
    return {
      answer: r.answer,
      status,
      costUsd,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, turns: r.turns ?? 1 },
      denials: r.denials ?? [],
      model: opts.model || this.modelFor(kind),
      exitCode: status === 'ok' ? 0 : 1,
      raw,
      stderr: '',
      durationMs: Date.now() - started,
    };
  }
}
