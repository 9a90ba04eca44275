import type { Config } from '../config/config.js';
import type { Agent, AgentCallOptions, AgentResult, AnswerOf, CallKind } from '../ports/agent.js';
import type { MeteredUsage } from '../ports/sandbox.js';
import { CREDENTIALS, hasCredential } from './credentials.js';
import { type AgentSettings, buildInvocation, modelFor, type PermissionMode, shellQuote } from './invocation.js';
import { withMetered } from './metered.js';
import { parseResult, type RawRun } from './result.js';

export function settingsFrom(config: Config): AgentSettings {
  return {
    budgetUsd: config.str('CHALK_BUDGET_USD'),
    timeoutS: config.num('CHALK_AGENT_TIMEOUT'),
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

  /** The `claude` CLI needs one of its credentials (CREDENTIALS) in the environment it is handed. */
  cannotRun(env: NodeJS.ProcessEnv): string | null {
    return hasCredential(env) ? null : `no agent credentials; export one of: ${CREDENTIALS.join(' ')}`;
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
    const timeoutS = this.settings.timeoutS;
    let run: Omit<RawRun, 'durationMs'>;
    let metered: MeteredUsage | undefined;
    try {
      const r = await opts.where.exec(shellQuote(argv), {
        stdin: prompt,
        cwd: opts.cwd,
        signal: opts.signal,
        onOutput: opts.onOutput,
        ...(timeoutS ? { timeoutMs: timeoutS * 1000 } : {}),
        // Only the agent CLI gets the credentials (or, in a sandbox, the gateway and its token).
        agent: true,
        budgetUsd: Number(this.settings.budgetUsd),
      });
      metered = r.metered;
      run = {
        exitCode: r.exitCode,
        stdout: r.stdout,
        stderr: r.stderr,
        ...(r.timedOut ? { timedOut: true, timeoutS } : {}),
        ...(r.outputCapped ? { outputCapped: true } : {}),
        ...(r.killedBy ? { killedBy: r.killedBy } : {}),
      };
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      run = { exitCode: -1, stdout: '', stderr: err instanceof Error ? err.message : String(err) };
    }
    opts.signal?.throwIfAborted();
    const result = parseResult(kind, { ...run, durationMs: Date.now() - started }, requested, {
      capUsd: Number(this.settings.budgetUsd),
    });
    // Where the sandbox metered the model, that count is the call's spend (core/agent/metered.ts).
    return metered ? withMetered(result, metered) : result;
  }
}
