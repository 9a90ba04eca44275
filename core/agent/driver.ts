import type { Config } from '../config/config.js';
import type { Agent, AgentCallOptions, AgentResult, AnswerOf, CallKind } from '../ports/agent.js';
import { type AgentSettings, buildInvocation, modelFor, type PermissionMode, shellQuote } from './invocation.js';
import { parseResult } from './result.js';

export function settingsFrom(config: Config): AgentSettings {
  return {
    budgetUsd: config.str('CHALK_BUDGET_USD'),
    permissionMode: config.str('CHALK_PERMISSION_MODE') as PermissionMode,
    model: config.str('CHALK_MODEL'),
    cheapModel: config.str('CHALK_CHEAP_MODEL'),
    reviewModel: config.str('CHALK_REVIEW_MODEL'),
  };
}

/**
 * The Agent port on the `claude` CLI. It runs wherever the caller says
 * (`opts.where`: a sandbox session of any Sandbox implementation, or the
 * host), with the prompt on stdin. A failed or odd run becomes a result with
 * an error status and answer `none`; only an abort (the signal) throws.
 */
export class ClaudeAgent implements Agent {
  constructor(private readonly settings: AgentSettings) {}

  static fromConfig(config: Config): ClaudeAgent {
    return new ClaudeAgent(settingsFrom(config));
  }

  modelFor(kind: CallKind): string {
    return modelFor(kind, this.settings);
  }

  async call<K extends CallKind>(kind: K, prompt: string, opts: AgentCallOptions): Promise<AgentResult<AnswerOf[K]>> {
    const argv = buildInvocation({
      kind,
      settings: this.settings,
      systemPromptFile: opts.systemPromptFile,
      model: opts.model,
    });
    const requested = opts.model ?? this.modelFor(kind);
    const started = Date.now();
    let exitCode: number;
    let stdout = '';
    let stderr = '';
    try {
      const r = await opts.where.exec(shellQuote(argv), {
        stdin: prompt,
        cwd: opts.cwd,
        signal: opts.signal,
        onOutput: opts.onOutput,
        // Only the agent CLI gets the credentials.
        agent: true,
      });
      exitCode = r.exitCode;
      stdout = r.stdout;
      stderr = r.stderr;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      exitCode = -1;
      stderr = err instanceof Error ? err.message : String(err);
    }
    opts.signal?.throwIfAborted();
    return parseResult(kind, { exitCode, stdout, stderr, durationMs: Date.now() - started }, requested);
  }
}
