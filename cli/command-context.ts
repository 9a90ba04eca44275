import { type Config, loadConfig } from '../core/config/config.js';
import { pluginKeyTable } from '../core/config/table.js';
import { ConsoleLog } from '../core/kernel/console-log.js';
import type { Log } from '../core/ports/log.js';
import { worktreeRoot } from '../core/repo/git.js';
import { oneLine } from '../core/text/model.js';
import { BUILTIN_KEYS } from '../plugins/builtin-keys.js';

/*
 * What every command starts from, with no way to a plugin: nothing here imports one, a kernel
 * or a loader, so `chalk status` (cli/light.ts, bundled) stays apart from the module graph
 * plugins load into. cli/context.ts adds the plugins CHALK_PLUGINS names and the kernel.
 */

/** What most commands start from: the repository (if any), its configuration and a log. */
export interface CommandContext {
  root: string | null;
  config: Config;
  log: Log;
}

/**
 * The configuration against core's keys and the built-in plugins' (from their declarations:
 * nothing is imported). Keys of plugins CHALK_PLUGINS names are known once those load
 * (`withNamedPlugins`, `kernelContext` in cli/context.ts).
 */
export function loadCommandConfig(root: string | null, log: Log): Config {
  return loadConfig({ root, warn: (l) => log.warn(l), keys: pluginKeyTable(BUILTIN_KEYS) });
}

export async function commandContext(): Promise<CommandContext> {
  const log = new ConsoleLog();
  const root = await worktreeRoot();
  return { root, config: loadCommandConfig(root, log), log };
}

/** Prints rows as aligned columns (the `--json` form is the caller's). */
export function table(given: string[][]): string {
  // A cell is one line whatever it holds (a plan's title, a lesson): no row can print another row.
  const rows = given.map((r) => r.map((c) => oneLine(c, 1000)));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n')}\n`;
}
