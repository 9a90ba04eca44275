import { type Config, loadConfig } from '../config/config.js';
import { bootKernel } from '../kernel/boot.js';
import type { Kernel, Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { lessonMemoryPlugin } from '../memory/plugin.js';
import type { HostGit } from '../ports/host-git.js';
import { depsFromKernel, type RunDeps } from '../run/deps.js';
import { ScriptedAgent } from './agent.js';
import { ManualClock } from './clock.js';
import { RecordingForge } from './forge.js';
import { CollectingLog } from './log.js';
import { TempSandbox } from './sandbox.js';
import { MemoryStore } from './store.js';

export interface TestKernelOptions {
  /** The repository root whose `.chalk/config` is read (null: none). */
  root: string | null;
  /** The environment the configuration and the run read (state directory, credentials, CHALK_* keys). */
  env: NodeJS.ProcessEnv;
  /** More plugins, registered after the testing one, as CHALK_PLUGINS' are after the built-ins. */
  plugins?: Plugin[];
  sandbox?: TempSandbox;
  agent?: ScriptedAgent;
  store?: MemoryStore;
  forge?: RecordingForge;
  clock?: ManualClock;
  log?: CollectingLog;
  /** Replaces the host git port (default: core/git, which the kernel binds). */
  git?: HostGit;
}

export interface TestKernel {
  kernel: Kernel;
  config: Config;
  sandbox: TempSandbox;
  agent: ScriptedAgent;
  store: MemoryStore;
  forge: RecordingForge;
  clock: ManualClock;
  log: CollectingLog;
  /** The run's ports from the kernel, as the CLI takes them (`depsFromKernel`). */
  deps(): RunDeps;
}

/**
 * A kernel whose every port is a local fake: a sandbox over a temporary
 * directory, a scripted agent, an in-memory store, a recording forge, a manual
 * clock and a log that keeps its lines; host git is the real one. Booted by
 * `bootKernel` like the CLI's, with one plugin (`testing`) in place of the
 * built-ins (and the built-in `lesson-memory`, the recall ladder over the
 * memory store), so the hooks, the plugin registration and the selection are the
 * real ones and a test's own plugins tap and bind as a third party's would.
 */
export async function createTestKernel(o: TestKernelOptions): Promise<TestKernel> {
  const clock = o.clock ?? new ManualClock();
  const parts = {
    sandbox: o.sandbox ?? new TempSandbox(),
    agent: o.agent ?? new ScriptedAgent(),
    store: o.store ?? new MemoryStore(clock),
    forge: o.forge ?? new RecordingForge(),
    clock,
    log: o.log ?? new CollectingLog(),
  };
  const testing: Plugin = {
    name: 'testing',
    register(kernel) {
      kernel.bind(Tokens.Sandbox, { useValue: parts.sandbox });
      kernel.bind(Tokens.Agent, { useValue: parts.agent });
      kernel.bind(Tokens.Store, { useValue: parts.store });
      kernel.bind(Tokens.Forge, { useValue: parts.forge });
      kernel.bind(Tokens.Clock, { useValue: parts.clock });
      if (o.git) kernel.bind(Tokens.HostGit, { useValue: o.git });
    },
  };
  const config = loadConfig({ root: o.root, env: o.env, warn: (l) => parts.log.warn(l) });
  const kernel = await bootKernel({
    config,
    log: parts.log,
    builtins: [async () => testing, async () => lessonMemoryPlugin, ...(o.plugins ?? []).map((p) => async () => p)],
    ...(o.root ? { root: o.root } : {}),
    env: o.env,
  });
  return { kernel, config: kernel.config, ...parts, deps: () => depsFromKernel(kernel, o.env) };
}
