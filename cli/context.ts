import { type Config, loadConfig } from '../core/config/config.js';
import { ConsoleLog } from '../core/kernel/console-log.js';
import type { Kernel } from '../core/kernel/kernel.js';
import type { Log } from '../core/ports/log.js';
import { worktreeRoot } from '../core/repo/git.js';

/** What most commands start from: the repository (if any), its configuration and a log. */
export interface CommandContext {
  root: string | null;
  config: Config;
  log: Log;
}

export async function commandContext(): Promise<CommandContext> {
  const log = new ConsoleLog();
  const root = await worktreeRoot();
  const config = loadConfig({ root, warn: (l) => log.warn(l) });
  return { root, config, log };
}

/** The context plus a kernel with every built-in and CHALK_PLUGINS plugin registered. */
export async function kernelContext(ctx?: CommandContext): Promise<CommandContext & { kernel: Kernel }> {
  const c = ctx ?? (await commandContext());
  // Imported here, not at the top: commands that need no kernel (config, init, new) never load
  // tsyringe, tapable or the plugin list, which keeps their start-up fast.
  const [{ bootKernel }, { BUILTIN_PLUGINS }] = await Promise.all([
    import('../core/kernel/boot.js'),
    import('../plugins/builtin.js'),
  ]);
  const kernel = await bootKernel({ config: c.config, log: c.log, builtins: BUILTIN_PLUGINS });
  return { ...c, kernel };
}

/** Prints rows as aligned columns (the `--json` form is the caller's). */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return `${rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n')}\n`;
}
