import { describe, expect, it } from 'vitest';
import { ClaudeAgent } from '../../core/agent/driver.js';
import { agentPlugin } from '../../core/agent/plugin.js';
import { loadConfig } from '../../core/config/config.js';
import { Kernel } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { AgentHost } from '../../core/ports/agent.js';
import type { Log } from '../../core/ports/log.js';
import type { ExecOptions } from '../../core/ports/sandbox.js';

const log: Log = { info() {}, warn() {}, error() {}, debug() {}, child: () => log };
const kernelWith = (env: Record<string, string>) => new Kernel(loadConfig({ root: null, env }), log);

describe('the core agent plugin', () => {
  it('binds the claude driver to the Agent port and adds the auto-mode check', async () => {
    const kernel = kernelWith({});
    await kernel.use(agentPlugin);
    expect(kernel.container.resolve(Tokens.Agent)).toBeInstanceOf(ClaudeAgent);
    expect(kernel.checks.map((c) => c.id)).toContain('agent-start-mode');
  });

  it('the claude driver says it cannot run without one of its credentials, naming them', async () => {
    const kernel = kernelWith({});
    await kernel.use(agentPlugin);
    const agent = kernel.resolve(Tokens.Agent);
    expect(agent.cannotRun({ ANTHROPIC_API_KEY: '' })).toBe(
      'no agent credentials; export one of: ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN ANTHROPIC_AUTH_TOKEN',
    );
    expect(agent.cannotRun({ CLAUDE_CODE_OAUTH_TOKEN: 'tok' })).toBeNull();
  });

  it('does not probe in bypass mode', async () => {
    const kernel = kernelWith({ CHALK_PERMISSION_MODE: 'bypass' });
    let probed = 0;
    kernel.bind(Tokens.Sandbox, {
      useValue: {
        runOnce: async () => {
          probed++;
          return { exitCode: 0, stdout: '', stderr: '', timedOut: false };
        },
      } as never,
    });
    await kernel.use(agentPlugin);
    const check = kernel.checks.find((c) => c.id === 'agent-start-mode');
    expect(await check?.run()).toMatchObject({ status: '--', detail: expect.stringMatching(/bypass/) });
    expect(probed).toBe(0);
  });

  it('asks the sandbox image when the sandbox can run one-shot commands', async () => {
    const kernel = kernelWith({ CHALK_MODEL: 'opus' });
    const asked: string[][] = [];
    kernel.bind(Tokens.Sandbox, {
      useValue: {
        runOnce: async (argv: string[]) => {
          asked.push(argv);
          const response = { response: { current_permission_mode: 'default' } };
          return {
            exitCode: 0,
            stdout: `${JSON.stringify({ type: 'control_response', response })}\n`,
            stderr: '',
            timedOut: false,
          };
        },
      } as never,
    });
    await kernel.use(agentPlugin);
    const r = await kernel.checks.find((c) => c.id === 'agent-start-mode')?.run();
    expect(r).toMatchObject({
      status: 'FAIL',
      label: 'auto mode for opus',
      detail: expect.stringMatching(/manual mode/),
    });
    expect(asked[0]?.slice(-2)).toEqual(['--model', 'opus']);
  });

  it('cannot verify without a sandbox', async () => {
    const kernel = kernelWith({});
    await kernel.use(agentPlugin);
    const r = await kernel.checks.find((c) => c.id === 'agent-start-mode')?.run();
    expect(r).toMatchObject({ status: '--', detail: expect.stringMatching(/could not verify/) });
  });
});

describe('ClaudeAgent.call', () => {
  const recorder = (stdout: string, exitCode = 0) => {
    const seen: { command: string; opts?: ExecOptions }[] = [];
    const where: AgentHost = {
      async exec(command, opts) {
        seen.push({ command, opts });
        return { exitCode, stdout, stderr: '', timedOut: false };
      },
    };
    return { seen, where };
  };

  it('sends the prompt on stdin and the flags for the kind, reading the answer back', async () => {
    const agent = ClaudeAgent.fromConfig(loadConfig({ root: null, env: { CHALK_BUDGET_USD: '0.50' } }));
    const { seen, where } = recorder(
      JSON.stringify({ is_error: false, structured_output: { lesson: 'When a, do b, because c.', scope: 'repo' } }),
    );
    const r = await agent.call('distill', 'the secret prompt', {
      where,
      systemPromptFile: '/chalk/system.md',
      cwd: '/work/repo',
    });
    expect(r.answer).toEqual({ lesson: 'When a, do b, because c.', scope: 'repo' });
    expect(r.status).toBe('ok');
    expect(r.model).toBe('haiku');
    expect(seen[0]?.opts).toMatchObject({ stdin: 'the secret prompt', cwd: '/work/repo' });
    expect(seen[0]?.command).not.toContain('the secret prompt');
    expect(seen[0]?.command).toContain(
      '--max-budget-usd 0.50 --append-system-prompt-file /chalk/system.md --model haiku --permission-mode dontAsk',
    );
  });

  it('turns a failing host into status error and answer none', async () => {
    const agent = ClaudeAgent.fromConfig(loadConfig({ root: null, env: {} }));
    const where: AgentHost = { exec: () => Promise.reject(new Error('container gone')) };
    const r = await agent.call('continue', 'p', { where, systemPromptFile: '/s' });
    expect(r).toMatchObject({ status: 'error', answer: 'none', exitCode: -1, stderr: 'container gone' });
  });

  it('rethrows when the caller aborted', async () => {
    const agent = ClaudeAgent.fromConfig(loadConfig({ root: null, env: {} }));
    const ac = new AbortController();
    const where: AgentHost = {
      exec: () => {
        ac.abort(new Error('SIGTERM'));
        return Promise.reject(new Error('killed'));
      },
    };
    await expect(agent.call('continue', 'p', { where, systemPromptFile: '/s', signal: ac.signal })).rejects.toThrow(
      'killed',
    );
  });
});
