import { readFileSync } from 'node:fs';
import type { BaseContext, Cli as CliClass, CommandClass } from 'clipanion';
import { TerminalStream } from '../core/text/terminal.js';

/*
 * What the CLI's two entries share: main.js (every command) and light.js (`chalk status`, run
 * from its bundle, dist/cli/light.cjs). Both end a command the same way and print the same
 * lines; main.js reads the arguments with clipanion, light.js takes the exact forms it serves.
 */

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

/** Ends the command quietly when stdout's or stderr's reader goes away (call first). */
export function endQuietlyOnClosedPipe(): void {
  process.stdout.on('error', onWriteError);
  process.stderr.on('error', onWriteError);
}

/**
 * Every line a command prints may carry repository or sandbox text: both channels strip
 * control characters and escape sequences (core/text/terminal.ts), here and nowhere else.
 * They are made once the command is known (`openChannels`).
 */
let channels: { stdout: TerminalStream; stderr: TerminalStream } | undefined;

export function openChannels(): { stdout: TerminalStream; stderr: TerminalStream } {
  channels ??= { stdout: new TerminalStream(process.stdout), stderr: new TerminalStream(process.stderr) };
  return channels;
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Prints one line for an error a user can fix; anything else also gets one line, and its stack with CHALK_DEBUG=1. */
export function fail(err: unknown): number {
  const e = err as { name?: string; message?: string; exitCode?: number; stack?: string };
  const message = (e?.message ?? String(err)).split('\n')[0];
  // Before the channels exist only loading Chalk's own modules can fail: its message has no outside text.
  const out = channels?.stderr ?? process.stderr;
  out.write(`chalk: ${message}\n`);
  if (process.env.CHALK_DEBUG === '1' && e?.stack) out.write(`${e.stack}\n`);
  return typeof e?.exitCode === 'number' ? e.exitCode : 1;
}

/** Runs a command that reads no arguments on the channels; an error gets one line (`fail`). Returns the exit code. */
export async function runOnChannels(
  command: (out: { stdout: TerminalStream; stderr: TerminalStream }) => Promise<number>,
): Promise<number> {
  try {
    return await command(openChannels());
  } catch (err) {
    return fail(err);
  }
}

/** What a plugin's command finds in `this.context` beside clipanion's streams (PluginCommandContext). */
export type PluginCommandContext = Omit<import('../core/plugin.js').PluginCommandContext, keyof BaseContext>;

/**
 * Runs one command's class on the arguments: bad arguments get one line and the command's
 * usage (exit 2), an error while it runs one line (`fail`). Returns the exit code.
 */
export async function runCommandClass(
  Cli: typeof CliClass,
  commandClass: CommandClass,
  argv: string[],
  usage: string,
  extra: PluginCommandContext | null,
): Promise<number> {
  const { stdout, stderr } = openChannels();
  const cli = new Cli({ binaryName: 'chalk', binaryVersion: version(), enableCapture: false });
  const context = { stdin: process.stdin, stdout, stderr, env: process.env, colorDepth: 1, ...extra };
  let command: Awaited<ReturnType<typeof cli.process>>;
  try {
    cli.register(commandClass);
    command = cli.process(argv, context);
  } catch (err) {
    const message = (err as Error).message.split('\n').find((l) => l.trim() !== '') ?? 'bad arguments';
    stderr.write(`chalk: ${message.replace(/^Usage Error: /, '')}\nusage: ${usage}\n`);
    return 2;
  }
  // `chalk status --help` is clipanion's own help command, not the class: it prints the usage
  // through the cli that `run` hands it (validateAndExecute alone left it none to print with).
  if (!(command instanceof commandClass)) return cli.run(command, context);
  try {
    const code = await command.validateAndExecute();
    return typeof code === 'number' ? code : 0;
  } catch (err) {
    return fail(err);
  }
}

/** Sets the process's exit code from the command's (or from the error that ended it). */
export function exitWith(done: Promise<number>): void {
  done.then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.exitCode = fail(err);
    },
  );
}
