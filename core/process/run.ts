import { spawn } from 'node:child_process';
import { type RunOptions, type RunResult, runEnd } from './run-types.js';
import { liveSpawner } from './spawner.js';

export type { RunOptions, RunResult } from './run-types.js';

/**
 * Runs a program (never a shell) and collects its output. A program that is
 * not installed gives code 127, like a shell would, instead of throwing.
 * While a run holds the process helper (spawner.ts), the helper starts it.
 */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const helper = liveSpawner();
  if (helper) return helper.run(cmd, args, opts);
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolvePromise(runEnd({ code: null, signal: null, error, stdout, stderr }));
    });
    child.on('close', (code, signal) => {
      resolvePromise(runEnd({ code, signal, error: null, stdout, stderr }));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs a program and returns its trimmed stdout, or throws with its stderr's first line. */
export async function runOk(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    const first = (r.stderr.trim() || r.stdout.trim()).split('\n')[0] ?? '';
    throw new Error(`${cmd} ${args[0] ?? ''} failed (exit ${r.code})${first ? `: ${first}` : ''}`);
  }
  return r.stdout.trim();
}
