import type { PluginSource } from '../core/kernel/boot.js';
import type { Plugin } from '../core/plugin.js';
import { DECIDER_HTTP_KEYS } from './decider-http/keys.js';
import { DECIDER_LOCAL_COMMANDS } from './decider-local/commands.js';
import { SANDBOX_COMMANDS } from './sandbox-docker/commands.js';
import { SANDBOX_PLUGIN_KEYS } from './sandbox-docker/keys.js';

/**
 * A built-in plugin as the CLI knows it before importing it: its name, what it declares
 * (the same lists the plugin's own object carries; tests/unit/plugin-declarations.test.ts
 * holds them equal) and a loader. Commands that boot no kernel (`chalk config`, `chalk init`)
 * read the declarations; only a kernel imports the plugins.
 */
export interface BuiltinPlugin extends Pick<Plugin, 'name' | 'configuration' | 'commands'> {
  load: PluginSource;
}

/** Every built-in plugin, in registration order. */
export const BUILTINS: readonly BuiltinPlugin[] = [
  { name: 'store', load: async () => (await import('../core/store/plugin.js')).storePlugin },
  { name: 'lesson-memory', load: async () => (await import('../core/memory/plugin.js')).lessonMemoryPlugin },
  { name: 'core-forge', load: async () => (await import('../core/forge/plugin.js')).forgeSelection },
  { name: 'forge-github', load: async () => (await import('./forge-github/index.js')).default },
  { name: 'forge-gitlab', load: async () => (await import('./forge-gitlab/index.js')).default },
  { name: 'core-decider', load: async () => (await import('../core/decision/plugin.js')).deciderSelection },
  {
    name: 'decider-http',
    configuration: DECIDER_HTTP_KEYS,
    load: async () => (await import('./decider-http/index.js')).default,
  },
  {
    name: 'decider-local',
    commands: DECIDER_LOCAL_COMMANDS,
    load: async () => (await import('./decider-local/index.js')).default,
  },
  { name: 'embed-local', load: async () => (await import('./decider-local/embed/index.js')).default },
  {
    name: 'sandbox-docker',
    configuration: SANDBOX_PLUGIN_KEYS,
    commands: SANDBOX_COMMANDS,
    load: async () => (await import('./sandbox-docker/index.js')).default,
  },
  { name: 'core-agent', load: async () => (await import('../core/agent/plugin.js')).agentPlugin },
  { name: 'core-fleet', load: async () => (await import('../core/fleet/plugin.js')).fleetPlugin },
];

/** The loaders alone, for bootKernel. */
export const BUILTIN_PLUGINS: readonly PluginSource[] = BUILTINS.map((b) => b.load);
