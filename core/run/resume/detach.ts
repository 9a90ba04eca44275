import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { pidFileText } from '../../process/pid.js';
import { refuseLiveRun } from '../base/claim.js';
import type { RunContext } from '../base/context.js';

/**
 * `chalk run --detach`: the same command again as a detached child with
 * stdin from /dev/null and its output in `run.log`. The parent writes the
 * child's pid into the pid file before it returns, so `chalk status` shows
 * `running` at once; the child's claim accepts its own pid.
 */
export function detachRun(
  ctx: RunContext,
  opts: { argv?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): number {
  refuseLiveRun(ctx.paths, ctx.ticket);
  mkdirSync(ctx.paths.dir, { recursive: true });
  const out = openSync(ctx.paths.runLog, 'w');
  try {
    const script = process.argv[1] ?? '';
    const child = spawn(process.execPath, [...process.execArgv, script, ...(opts.argv ?? ['run'])], {
      cwd: opts.cwd ?? ctx.root,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error('could not start the background run');
    writeFileSync(ctx.paths.pid, pidFileText(pid));
    child.unref();
    return pid;
  } finally {
    closeSync(out);
  }
}
