#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import type { BaseContext } from 'clipanion';
import type { TerminalStream } from '../core/text/terminal.js';
import type { CommandEntry } from './registry.js';

// Every line a command prints may carry repository or sandbox text: both channels strip
// control characters and escape sequences (core/text/terminal.ts), here and nowhere else.
// They are made once the command is known. `chalk version` is answered by the binary
// (cli/chalk.cts, CommonJS: its start-up is node's; bench/cli-startup.mjs) before this
// module loads; here it is answered only when main.js is run itself.
let stdout: TerminalStream;
let stderr: TerminalStream | undefined;

/**
 * A reader that went away (`chalk decider status | head -1`) ends any command
 * quietly with exit 0, as a pipe's writer should: no stack trace, no error
 * line, nothing more written. A command that cleans up on SIGTERM (a run: its
 * sandbox removed, its call recorded) is ended that way; the rest at once.
 */
let readerGone = false;
function onWriteError(err: NodeJS.ErrnoException): void {
  if (readerGone) return;
  if (err.code !== 'EPIPE') throw err;
  readerGone = true;
  process.once('exit', () => {
    process.exitCode = 0;
  });
  if (process.listenerCount('SIGTERM') > 0) process.kill(process.pid, 'SIGTERM');
  else process.exit(0);
}
process.stdout.on('error', onWriteError);
process.stderr.on('error', onWriteError);

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Prints one line for an error a user can fix; anything else also gets one line, and its stack with CHALK_DEBUG=1. */
function fail(err: unknown): number {
  const e = err as { name?: string; message?: string; exitCode?: number; stack?: string };
  const message = (e?.message ?? String(err)).split('\n')[0];
  // Before the channels exist only loading Chalk's own modules can fail: its message has no outside text.
  const out = stderr ?? process.stderr;
  out.write(`chalk: ${message}\n`);
  if (process.env.CHALK_DEBUG === '1' && e?.stack) out.write(`${e.stack}\n`);
  return typeof e?.exitCode === 'number' ? e.exitCode : 1;
}

/** What a plugin's command finds in `this.context` beside clipanion's streams (PluginCommandContext). */
type PluginCommandContext = Omit<import('../core/plugin.js').PluginCommandContext, keyof BaseContext>;

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
  const [{ TerminalStream }, { findCommand, usageText }] = await Promise.all([
    import('../core/text/terminal.js'),
    import('./registry.js'),
  ]);
  stdout = new TerminalStream(process.stdout);
  stderr = new TerminalStream(process.stderr);
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
  const cli = new Cli({ binaryName: 'chalk', binaryVersion: version(), enableCapture: false });
  let command: Awaited<ReturnType<typeof cli.process>>;
  try {
    cli.register(commandClass);
    command = cli.process(argv, {
      stdin: process.stdin,
      stdout,
      stderr,
      env: process.env,
      colorDepth: 1,
      ...extra,
    });
  } catch (err) {
    const message = (err as Error).message.split('\n').find((l) => l.trim() !== '') ?? 'bad arguments';
    stderr.write(`chalk: ${message.replace(/^Usage Error: /, '')}\nusage: ${entry.usage}\n`);
    return 2;
  }
  try {
    const code = await command.validateAndExecute();
    return typeof code === 'number' ? code : 0;
  } catch (err) {
    return fail(err);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = fail(err);
  },
);
