#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { TerminalStream } from '../core/text/terminal.js';
import { findCommand, usageText } from './registry.js';

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

async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    stdout.write(usageText(version()));
    return 0;
  }
  if (first === 'version' || first === '--version' || first === '-v') {
    stdout.write(`${version()}\n`);
    return 0;
  }
  const entry = findCommand(argv);
  if (!entry) {
    stderr.write(`chalk: unknown command '${argv.join(' ')}'\n\n${usageText(version())}`);
    return 2;
  }
  // Load clipanion and the command's module side by side.
  const [{ Cli }, commandClass] = await Promise.all([import('clipanion'), entry.load()]);
  const cli = new Cli({ binaryName: 'chalk', binaryVersion: version(), enableCapture: false });
  cli.register(commandClass);
  let command: Awaited<ReturnType<typeof cli.process>>;
  try {
    command = cli.process(argv, {
      stdin: process.stdin,
      stdout,
      stderr,
      env: process.env,
      colorDepth: 1,
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
