import type { Config } from '../config/config.js';
import type { Log } from '../ports/log.js';
import { Kernel, type Plugin } from './kernel.js';
import { loadPlugin } from './plugin-loader.js';

export type PluginSource = () => Promise<Plugin>;

export interface BootOptions {
  config: Config;
  log: Log;
  /** Built-in plugins, in order (the CLI passes its list; the core names no plugin). */
  builtins: readonly PluginSource[];
  /** Where CHALK_PLUGINS paths are resolved from; defaults to the repository root or cwd. */
  root?: string;
}

/** Builds a kernel: built-in plugins, then CHALK_PLUGINS in order, then port selection. */
export async function bootKernel(opts: BootOptions): Promise<Kernel> {
  const kernel = new Kernel(opts.config, opts.log);
  for (const source of opts.builtins) await kernel.use(await source());
  const root = opts.root ?? opts.config.root ?? process.cwd();
  for (const spec of opts.config.list('CHALK_PLUGINS')) {
    await kernel.use(await loadPlugin(spec, root));
  }
  await kernel.settle();
  return kernel;
}
