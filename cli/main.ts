#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { TerminalStream } from '../core/text/terminal.js';
import { type CommandEntry, findCommand, usageText } from './registry.js';

// Every line a command prints may carry repository or sandbox text: both channels strip
// control characters and escape sequences (core/text/terminal.ts), here and nowhere else.
const stdout = new TerminalStream(process.stdout);
const stderr = new TerminalStream(process.stderr);

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Prints one line for an error a user can fix; anything else also gets one line, and its stack with CHALK_DEBUG=1. */
function fail(err: unknown): number {
  const e = err as { name?: string; message?: string; exitCode?: number; stack?: string };
  const message = (e?.message ?? String(err)).split('\n')[0];
  stderr.write(`chalk: ${message}\n`);
  if (process.env.CHALK_DEBUG === '1' && e?.stack) stderr.write(`${e.stack}\n`);
  return typeof e?.exitCode === 'number' ? e.exitCode : 1;
}

/** What a plugin's command finds in `this.context` beside clipanion's streams. */
interface PluginCommandContext {
  /** The configuration, every plugin's keys included. */
  config: unknown;
  /** Boots a kernel (every plugin registered) for a command that needs the ports. */
  kernel: () => Promise<unknown>;
}

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
    return {
      entries,
      context: { config: ctx.config, kernel: async () => (await kernelContext(ctx)).kernel },
    };
  } catch (err) {
    return { entries: [], context: null, error: (err as Error).message?.split('\n')[0] ?? String(err) };
  }
}

async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    const plugins = await lookUpPluginCommands();
    stdout.write(usageText(version(), plugins.entries));
    if (plugins.error) stderr.write(`chalk: plugin commands not listed: ${plugins.error}\n`);
    return 0;
  }
  if (first === 'version' || first === '--version' || first === '-v') {
    stdout.write(`${version()}\n`);
    return 0;
  }
  let entry = findCommand(argv);
  let extra: PluginCommandContext | null = null;
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
