#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { findCommand, usageText } from './registry.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Prints one line for an error a user can fix; anything else also gets one line, and its stack with CHALK_DEBUG=1. */
function fail(err: unknown): number {
  const e = err as { name?: string; message?: string; exitCode?: number; stack?: string };
  const message = (e?.message ?? String(err)).split('\n')[0];
  process.stderr.write(`chalk: ${message}\n`);
  if (process.env.CHALK_DEBUG === '1' && e?.stack) process.stderr.write(`${e.stack}\n`);
  return typeof e?.exitCode === 'number' ? e.exitCode : 1;
}

async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    process.stdout.write(usageText(version()));
    return 0;
  }
  if (first === 'version' || first === '--version' || first === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const entry = findCommand(argv);
  if (!entry) {
    process.stderr.write(`chalk: unknown command '${argv.join(' ')}'\n\n${usageText(version())}`);
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
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
      colorDepth: 1,
    });
  } catch (err) {
    const message = (err as Error).message.split('\n').find((l) => l.trim() !== '') ?? 'bad arguments';
    process.stderr.write(`chalk: ${message.replace(/^Usage Error: /, '')}\nusage: ${entry.usage}\n`);
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
