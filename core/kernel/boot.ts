import type { Config } from '../config/config.js';
import type { Log } from '../ports/log.js';
import { Kernel, type Plugin } from './kernel.js';
import { importPlugin, type ResolvedPlugin, resolvePlugin } from './plugin-loader.js';
import { assertPluginTrusted, readPluginTrust } from './plugin-trust.js';

export type PluginSource = () => Promise<Plugin>;

export interface BootOptions {
  config: Config;
  log: Log;
  /** Built-in plugins, in order (the CLI passes its list; the core names no plugin). */
  builtins: readonly PluginSource[];
  /** Where CHALK_PLUGINS paths are resolved from; defaults to the repository root or cwd. */
  root?: string;
  /** Where the plugin trust record is found (its state directory); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Finds every CHALK_PLUGINS plugin and, when they are named in .chalk/config, refuses with one
 * line any not trusted on this machine (or changed since). Imports nothing; bootKernel calls it
 * first, and a command that hands work to another process (`chalk run --detach`) can call it to
 * refuse before it does.
 */
export function checkPlugins(opts: Pick<BootOptions, 'config' | 'root' | 'env'>): ResolvedPlugin[] {
  const root = opts.root ?? opts.config.root ?? process.cwd();
  const plugins = opts.config.list('CHALK_PLUGINS').map((spec) => resolvePlugin(spec, root));
  if (plugins.length > 0 && opts.config.entry('CHALK_PLUGINS').source === 'file') {
    const trusted = readPluginTrust(opts.env ?? process.env);
    for (const plugin of plugins) assertPluginTrusted(plugin, trusted);
  }
  return plugins;
}

/**
 * Builds a kernel: built-in plugins, then CHALK_PLUGINS in order, then port selection.
 * Plugins named in .chalk/config must be trusted on this machine (core/kernel/plugin-trust.ts);
 * every one is checked before anything, built-ins included, is imported.
 */
export async function bootKernel(opts: BootOptions): Promise<Kernel> {
  const plugins = checkPlugins(opts);
  const kernel = new Kernel(opts.config, opts.log);
  for (const source of opts.builtins) await kernel.use(await source());
  for (const plugin of plugins) await kernel.use(await importPlugin(plugin));
  await kernel.settle();
  return kernel;
}
