import type { PluginSource } from '../core/kernel/boot.js';

/**
 * Every built-in plugin, in registration order. Each is imported only when a
 * command boots a kernel, so `chalk version` and `chalk config` stay fast.
 */
export const BUILTIN_PLUGINS: readonly PluginSource[] = [
  async () => (await import('../core/store/plugin.js')).storePlugin,
  async () => (await import('../core/forge/plugin.js')).forgeSelection,
  async () => (await import('./forge-github/index.js')).default,
  async () => (await import('./forge-gitlab/index.js')).default,
  async () => (await import('./decider-http/index.js')).default,
  async () => (await import('./sandbox-docker/index.js')).default,
  async () => (await import('../core/agent/plugin.js')).agentPlugin,
];
