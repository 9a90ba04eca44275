/**
 * The process helper's own process (spawner.ts): it starts the programs the host asks for and
 * sends back what each printed. It imports nothing but node's child_process, so it stays small,
 * and starting a program from it costs a fork of this small process, not of the harness's (a
 * fork's cost grows with the memory of the process that forks, and node's fork blocks its thread).
 */
import { spawn } from 'node:child_process';

/** A request: the program, its argv, and how to run it (RunOptions, with the env always given). */
interface Ask {
  id: number;
  cmd: string;
  args: string[];
  cwd?: string;
  input: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

function start(ask: Ask): void {
  const child = spawn(ask.cmd, ask.args, {
    cwd: ask.cwd,
    env: ask.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: ask.timeoutMs,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let failed: NodeJS.ErrnoException | null = null;
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => err.push(d));
  child.on('error', (e: NodeJS.ErrnoException) => {
    failed = e;
  });
  child.on('close', (code, signal) => {
    process.send?.({
      id: ask.id,
      code,
      signal,
      error: failed ? { code: failed.code ?? '', message: failed.message } : null,
      stdout: Buffer.concat(out),
      stderr: Buffer.concat(err),
    });
  });
  child.stdin.on('error', () => {});
  child.stdin.end(ask.input);
}

process.on('message', (m: Ask) => start(m));
// The harness went away: nothing is left to answer.
process.on('disconnect', () => process.exit(0));
