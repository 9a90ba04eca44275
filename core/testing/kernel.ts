import { type Config, loadConfig } from '../config/config.js';
import { deciderSelection } from '../decision/plugin.js';
import { forgeSelection } from '../forge/plugin.js';
import { bootKernel } from '../kernel/boot.js';
import type { Kernel, Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { lessonMemoryPlugin } from '../memory/plugin.js';
import type { HostGit } from '../ports/host-git.js';
import { depsFromKernel, type RunDeps } from '../run/index.js';
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
  /**
   * More plugins, registered after the core's, as CHALK_PLUGINS' are after the built-ins: what
   * they bind replaces a fake, and what they offer is selected as the CLI would (a decider
   * by CHALK_DECIDER_PROVIDER or what it declares; a forge they offer by CHALK_FORGE, in place
   * of the recording forge).
   */
  plugins?: Plugin[];
  sandbox?: TempSandbox;
  agent?: ScriptedAgent;
  store?: MemoryStore;
  /** The forge to bind; by default a RecordingForge, unless a test plugin offers a forge of its own. */
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
 * `bootKernel` like the CLI's: one plugin (`testing`) in place of the built-ins
 * that reach the machine, then the core's own plugins that choose among offers
 * and ask the decider (`core-forge`, `core-decider`) and the recall ladder
 * (`lesson-memory`), then the test's plugins; so the hooks, the registration and
 * the selection are the real ones, and a third party's decider offered in a test
 * is bound and asked, and its taps run, as in `chalk run`.
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
      kernel.bind(Tokens.Clock, { useValue: parts.clock });
      if (o.git) kernel.bind(Tokens.HostGit, { useValue: o.git });
    },
  };
  // The forges offered before the test's plugins (core's `none`): the recording forge stands in
  // for github and gitlab unless a test plugin offers or binds a forge of its own.
  let coreForges: string[] = [];
  const mark: Plugin = {
    name: 'testing-mark',
    register(kernel) {
      coreForges = kernel.offered('Forge');
    },
  };
  const forge: Plugin = {
    name: 'testing-forge',
    register(kernel) {
      const offeredByTest = kernel.offered('Forge').some((n) => !coreForges.includes(n));
      if (kernel.boundByPlugin(Tokens.Forge) === undefined && (o.forge || !offeredByTest)) {
        kernel.bind(Tokens.Forge, { useValue: parts.forge });
      }
    },
  };
  const config = loadConfig({ root: o.root, env: o.env, warn: (l) => parts.log.warn(l) });
  const plugins = [testing, forgeSelection, deciderSelection, lessonMemoryPlugin, mark, ...(o.plugins ?? []), forge];
  const kernel = await bootKernel({
    config,
    log: parts.log,
    builtins: plugins.map((p) => async () => p),
    ...(o.root ? { root: o.root } : {}),
    env: o.env,
  });
  return { kernel, config: kernel.config, ...parts, deps: () => depsFromKernel(kernel, o.env) };
}
