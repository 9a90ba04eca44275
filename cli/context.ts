import { pluginKeyTable } from '../core/config/table.js';
import type { Kernel, Plugin } from '../core/kernel/kernel.js';
import { BUILTINS } from '../plugins/builtin.js';
import { type CommandContext, commandContext } from './command-context.js';

export { type CommandContext, commandContext, loadCommandConfig, table } from './command-context.js';

/**
 * The context with the plugins CHALK_PLUGINS names imported (trust rules first) and the
 * configuration read against their keys too, without booting a kernel or importing a
 * built-in plugin: for `chalk config` and `chalk help`.
 */
export async function withNamedPlugins(c: CommandContext): Promise<CommandContext & { plugins: Plugin[] }> {
  if (c.config.list('CHALK_PLUGINS').length === 0) return { ...c, plugins: [] };
  const { importNamedPlugins } = await import('../core/kernel/boot.js');
  const plugins = await importNamedPlugins({ config: c.config });
  return { ...c, config: c.config.withKeys(pluginKeyTable([...BUILTINS, ...plugins])), plugins };
}

/**
 * The context plus a kernel with every built-in and CHALK_PLUGINS plugin registered; its
 * configuration is the kernel's, with every plugin's keys.
 */
export async function kernelContext(ctx?: CommandContext): Promise<CommandContext & { kernel: Kernel }> {
  const c = ctx ?? (await commandContext());
  // Imported here, not at the top: commands that need no kernel (config, new) never load
  // tsyringe, tapable or the plugins, which keeps their start-up fast.
  const { bootKernel } = await import('../core/kernel/boot.js');
  const kernel = await bootKernel({
    config: c.config,
    log: c.log,
    builtins: BUILTINS.map((b) => b.load),
  });
  return { ...c, config: kernel.config, kernel };
}
