import { type Config, loadConfig } from '../core/config/config.js';
import { pluginKeyTable } from '../core/config/table.js';
import { ConsoleLog } from '../core/kernel/console-log.js';
import type { Kernel, Plugin } from '../core/kernel/kernel.js';
import type { Log } from '../core/ports/log.js';
import { worktreeRoot } from '../core/repo/git.js';
import { oneLine } from '../core/text/model.js';
import { BUILTINS } from '../plugins/builtin.js';

/** What most commands start from: the repository (if any), its configuration and a log. */
export interface CommandContext {
  root: string | null;
  config: Config;
  log: Log;
}

/**
 * The configuration against core's keys and the built-in plugins' (from their declarations:
 * nothing is imported). Keys of plugins CHALK_PLUGINS names are known once those load
 * (`withNamedPlugins`, `kernelContext`).
 */
export function loadCommandConfig(root: string | null, log: Log): Config {
  return loadConfig({ root, warn: (l) => log.warn(l), keys: pluginKeyTable(BUILTINS) });
}

export async function commandContext(): Promise<CommandContext> {
  const log = new ConsoleLog();
  const root = await worktreeRoot();
  return { root, config: loadCommandConfig(root, log), log };
}

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

/** Prints rows as aligned columns (the `--json` form is the caller's). */
export function table(given: string[][]): string {
  // A cell is one line whatever it holds (a plan's title, a lesson): no row can print another row.
  const rows = given.map((r) => r.map((c) => oneLine(c, 1000)));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n')}\n`;
}
