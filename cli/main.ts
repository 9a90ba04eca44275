#!/usr/bin/env node
import {
  endQuietlyOnClosedPipe,
  exitWith,
  fail,
  openChannels,
  type PluginCommandContext,
  runCommandClass,
  version,
} from './launch.js';
import type { CommandEntry } from './registry.js';

// `chalk version` is answered by the binary (cli/chalk.cts, CommonJS: its start-up is node's;
// bench/cli-startup.mjs) before this module loads, and `chalk status` by the bundle of
// cli/light.ts; here both are answered only when main.js is run itself.
endQuietlyOnClosedPipe();

interface PluginLookup {
  entries: CommandEntry[];
  context: PluginCommandContext | null;
  /** Why the plugins' commands could not be listed (one line), when they could not. */
  error?: string;
}

/**
 * The commands of the plugins CHALK_PLUGINS names. Only reached when the words match no
 * built-in command (or for `chalk help`), and only then is the configuration read and are
 * those plugins imported (trust rules first); with CHALK_PLUGINS empty nothing is imported.
 */
async function lookUpPluginCommands(): Promise<PluginLookup> {
  try {
    const [{ commandContext, kernelContext, withNamedPlugins }, { pluginCommands }] = await Promise.all([
      import('./context.js'),
      import('./registry.js'),
    ]);
    const ctx = await withNamedPlugins(await commandContext());
    if (ctx.plugins.length === 0) return { entries: [], context: null };
    const entries = pluginCommands(ctx.plugins, () => import('clipanion'));
    return { entries, context: pluginContext(ctx, kernelContext) };
  } catch (err) {
    return { entries: [], context: null, error: (err as Error).message?.split('\n')[0] ?? String(err) };
  }
}

function pluginContext(
  ctx: import('./context.js').CommandContext,
  kernelContext: typeof import('./context.js').kernelContext,
): PluginCommandContext {
  return { config: ctx.config, root: ctx.root, kernel: async () => (await kernelContext(ctx)).kernel };
}

/** The context of a built-in plugin's command: the configuration against the built-in plugins' keys. */
async function builtinPluginContext(): Promise<PluginCommandContext> {
  const { commandContext, kernelContext } = await import('./context.js');
  return pluginContext(await commandContext(), kernelContext);
}

async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === 'version' || first === '--version' || first === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const { findCommand, usageText } = await import('./registry.js');
  const { stdout, stderr } = openChannels();
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    const plugins = await lookUpPluginCommands();
    stdout.write(usageText(version(), plugins.entries));
    if (plugins.error) stderr.write(`chalk: plugin commands not listed: ${plugins.error}\n`);
    return 0;
  }
  let entry = findCommand(argv);
  let extra: PluginCommandContext | null = null;
  if (entry?.builtinPlugin) {
    try {
      extra = await builtinPluginContext();
    } catch (err) {
      return fail(err);
    }
  }
  if (!entry) {
    const plugins = await lookUpPluginCommands();
    entry = findCommand(argv, plugins.entries);
    extra = plugins.context;
    if (!entry) {
      stderr.write(`chalk: unknown command '${argv.join(' ')}'\n\n${usageText(version(), plugins.entries)}`);
      if (plugins.error) stderr.write(`chalk: plugin commands not looked up: ${plugins.error}\n`);
      return 2;
    }
  }
  // Load clipanion and the command's module side by side.
  const [{ Cli }, commandClass] = await Promise.all([import('clipanion'), entry.load()]);
  return runCommandClass(Cli, commandClass, argv, entry.usage, extra);
}

exitWith(main(process.argv.slice(2)));
