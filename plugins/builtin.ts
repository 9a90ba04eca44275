import type { PluginSource } from '../core/kernel/boot.js';
import type { Plugin, PluginCommand } from '../core/plugin.js';
import { BUILTIN_KEYS, type BuiltinName } from './builtin-keys.js';
import { DECIDER_LOCAL_COMMANDS } from './decider-local/commands.js';
import { SANDBOX_COMMANDS } from './sandbox-docker/commands.js';

/**
 * A built-in plugin as the CLI knows it before importing it: its name, what it declares
 * (the same lists the plugin's own object carries; tests/unit/plugin-contract.test.ts
 * holds them equal) and a loader. Commands that boot no kernel (`chalk config`, `chalk init`)
 * read the declarations; only a kernel imports the plugins.
 */
export interface BuiltinPlugin extends Pick<Plugin, 'name' | 'configuration' | 'commands'> {
  load: PluginSource;
}

const LOADERS: Record<BuiltinName, PluginSource> = {
  store: async () => (await import('../core/store/plugin.js')).storePlugin,
  'lesson-memory': async () => (await import('../core/memory/plugin.js')).lessonMemoryPlugin,
  'core-forge': async () => (await import('../core/forge/plugin.js')).forgeSelection,
  'forge-github': async () => (await import('./forge-github/index.js')).default,
  'forge-gitlab': async () => (await import('./forge-gitlab/index.js')).default,
  'core-decider': async () => (await import('../core/decision/plugin.js')).deciderSelection,
  'decider-http': async () => (await import('./decider-http/index.js')).default,
  'decider-local': async () => (await import('./decider-local/index.js')).default,
  'embed-local': async () => (await import('./decider-local/embed/index.js')).default,
  'sandbox-docker': async () => (await import('./sandbox-docker/index.js')).default,
  'core-agent': async () => (await import('../core/agent/plugin.js')).agentPlugin,
  'core-fleet': async () => (await import('../core/fleet/plugin.js')).fleetPlugin,
};

const COMMANDS: Partial<Record<BuiltinName, readonly PluginCommand[]>> = {
  'decider-local': DECIDER_LOCAL_COMMANDS,
  'sandbox-docker': SANDBOX_COMMANDS,
};

/** Every built-in plugin, in registration order (plugins/builtin-keys.ts's). */
export const BUILTINS: readonly BuiltinPlugin[] = BUILTIN_KEYS.map((declared) => {
  const commands = COMMANDS[declared.name];
  return { ...declared, ...(commands ? { commands } : {}), load: LOADERS[declared.name] };
});

/** The loaders alone, for bootKernel. */
export const BUILTIN_PLUGINS: readonly PluginSource[] = BUILTINS.map((b) => b.load);
