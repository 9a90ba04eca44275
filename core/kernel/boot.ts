import type { Config } from '../config/config.js';
import { pluginKeyTable } from '../config/table.js';
import type { Log } from '../ports/log.js';
import { Kernel, KernelError, type Plugin } from './kernel.js';
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
 * Imports the plugins CHALK_PLUGINS names, in order, after `checkPlugins` refused any that
 * must be trusted and is not. What `chalk config` and `chalk help` call to learn those
 * plugins' keys and commands without booting a kernel.
 */
export async function importNamedPlugins(opts: Pick<BootOptions, 'config' | 'root' | 'env'>): Promise<Plugin[]> {
  const resolved = checkPlugins(opts);
  const plugins: Plugin[] = [];
  for (const plugin of resolved) plugins.push(await importPlugin(plugin));
  return plugins;
}

/**
 * Builds a kernel: the trust check of CHALK_PLUGINS (before anything, built-ins included,
 * is imported; core/kernel/plugin-trust.ts), the built-in plugins, then CHALK_PLUGINS in
 * order; then the configuration is read again against the key table they all declare (a
 * plugin's bad value, or a key declared twice, stops the boot with one line); then every
 * plugin registers, in the same order, and the ports with offers are selected.
 */
export async function bootKernel(opts: BootOptions): Promise<Kernel> {
  const resolved = checkPlugins(opts);
  const plugins: Plugin[] = [];
  const from = new Map<Plugin, string>();
  for (const source of opts.builtins) plugins.push(await source());
  for (const plugin of resolved) {
    const imported = await importPlugin(plugin);
    from.set(imported, `CHALK_PLUGINS entry '${plugin.spec}'`);
    plugins.push(imported);
  }
  refuseDuplicateNames(plugins, (p) => from.get(p) ?? 'a built-in plugin');
  const config = opts.config.withKeys(pluginKeyTable(plugins));
  const kernel = new Kernel(config, opts.log);
  for (const plugin of plugins) await kernel.use(plugin);
  await kernel.settle();
  return kernel;
}

/**
 * Two plugins with one name would tap the same hooks under one name and shadow each other's
 * bindings in every message: refused before any registers, with one line naming both.
 */
export function refuseDuplicateNames(plugins: readonly Plugin[], source: (p: Plugin) => string): void {
  const seen = new Map<string, Plugin>();
  for (const plugin of plugins) {
    const first = seen.get(plugin.name);
    if (first) {
      throw new KernelError(
        `two plugins are named '${plugin.name}': ${source(first)} and ${source(plugin)}; rename one, or take one out of CHALK_PLUGINS`,
      );
    }
    seen.set(plugin.name, plugin);
  }
}
