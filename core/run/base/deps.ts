import type { Config } from '../../config/config.js';
import { forgeGuardedPaths } from '../../forge/select.js';
import type { LoopHooks } from '../../kernel/hooks.js';
import type { Kernel } from '../../kernel/kernel.js';
import { Tokens } from '../../kernel/tokens.js';
import type { Agent } from '../../ports/agent.js';
import type { Clock } from '../../ports/clock.js';
import type { Embedder } from '../../ports/embedder.js';
import type { Forge } from '../../ports/forge.js';
import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import type { Sandbox } from '../../ports/sandbox.js';
import type { Store } from '../../ports/store.js';

/** The ports a run uses; from the kernel in the CLI, hand-made in tests. */
export interface RunDeps {
  config: Config;
  /** The command's log; the run writes through `log.child('[TICKET] ')`. */
  log: Log;
  sandbox: Sandbox;
  agent: Agent;
  store: Store;
  /** Resolved only at graduation (the forge's selection may read the origin). */
  forge: () => Forge;
  hooks: LoopHooks;
  clock: Clock;
  /** Host git on the user's repository. */
  git: HostGit;
  env: NodeJS.ProcessEnv;
  /**
   * Paths no loop may change for any offered forge (Forge.guardedPaths: their CI gate files),
   * which the guard refuses whichever forge is chosen.
   */
  guardedPaths: readonly string[];
  /** The bound Embedder, or null (office hours embeds the lesson it resolves); absent in most tests. */
  embedder?: () => Embedder | null;
}

export function depsFromKernel(kernel: Kernel, env: NodeJS.ProcessEnv = process.env): RunDeps {
  return {
    config: kernel.config,
    log: kernel.log,
    sandbox: kernel.resolve(Tokens.Sandbox),
    agent: kernel.resolve(Tokens.Agent),
    store: kernel.resolve(Tokens.Store),
    forge: () => kernel.resolve(Tokens.Forge),
    hooks: kernel.hooks,
    clock: kernel.resolve(Tokens.Clock),
    git: kernel.resolve(Tokens.HostGit),
    env,
    guardedPaths: forgeGuardedPaths(kernel.offeredInstances('Forge')),
    embedder: () => (kernel.has(Tokens.Embedder) ? kernel.resolve(Tokens.Embedder) : null),
  };
}
