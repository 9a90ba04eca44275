import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent, AgentResult, PlanAnswer } from '../ports/agent.js';
import type { HostGit } from '../ports/host-git.js';
import { SANDBOX_PATHS, type Sandbox, type SandboxSession } from '../ports/sandbox.js';
import { buildSystemPrompt, hostAuthor, type PromptSource } from '../run/index.js';

export interface PlanCallOptions {
  repo: string;
  /** The main checkout. */
  root: string;
  epic: string;
  /** The base branch the workstreams will start from: what the planner reads. */
  base: string;
  /** A directory of the epic's state (the bundle is made there and removed). */
  dir: string;
  prompts: PromptSource;
  rubricCommand: string;
  sandbox: Sandbox;
  agent: Agent;
  git: HostGit;
}

/**
 * The breakdown call, in a sandbox like every other agent call: nothing the repository supplies
 * (its `.claude/settings.json` hooks, `apiKeyHelper`, MCP servers and permissions, its
 * `CLAUDE.md`) reaches the host. The base branch goes in as a bundle, the planner reads it with
 * the read-only tools and answers the plan schema (zod-checked by the Agent port, then by the
 * plan's own rules); whatever it leaves in its sandbox is removed with it.
 */
export async function planInSandbox(prompt: string, o: PlanCallOptions): Promise<AgentResult<PlanAnswer>> {
  await o.sandbox.ensureImage();
  const source = join(o.dir, 'plan.in.bundle');
  rmSync(source, { force: true });
  let session: SandboxSession | undefined;
  try {
    await o.git.createBundle({ cwd: o.root, ref: `refs/heads/${o.base}`, out: source });
    session = await o.sandbox.open({
      repo: o.repo,
      source,
      ticket: o.epic,
      runId: `${o.epic}-plan`,
      branch: o.base,
      author: await hostAuthor(o.git, o.root),
      suffix: 'plan',
    });
    await session.clone();
    const system = buildSystemPrompt(o.prompts, { ticket: o.epic, rubricCommand: o.rubricCommand, textbook: null });
    await session.putFile('system.md', system);
    return await o.agent.call('plan', prompt, {
      where: session,
      systemPromptFile: `${SANDBOX_PATHS.io}/system.md`,
      cwd: SANDBOX_PATHS.repo,
    });
  } finally {
    rmSync(source, { force: true });
    await session?.stop().catch(() => undefined);
  }
}
