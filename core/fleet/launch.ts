import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname } from 'node:path';
import { runPaths } from '../layout.js';
import type { Launched } from './supervisor.js';

/** The CLI this process runs as (node, its flags and the script), to start more of it. */
export const selfArgv = (): string[] => [...process.execArgv, process.argv[1] ?? ''];

/**
 * Starts `chalk ARGS` as a detached process (its own session: closing the terminal or
 * killing the starter does not end it), stdin from /dev/null and its output into `logFile`.
 */
export function spawnDetachedChalk(o: {
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  append?: boolean;
}) {
  mkdirSync(dirname(o.logFile), { recursive: true });
  const out = openSync(o.logFile, o.append ? 'a' : 'w', 0o600);
  try {
    const child = spawn(process.execPath, [...selfArgv(), ...o.args], {
      cwd: o.cwd,
      env: o.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    if (child.pid === undefined) throw new Error(`could not start chalk ${o.args.join(' ')}`);
    return child;
  } finally {
    closeSync(out);
  }
}

/**
 * A workstream's run: an ordinary `chalk run` in its worktree, its output in the ticket's
 * `run.log` (as `chalk run --detach`), its pid written before this returns so nobody sees it
 * as not started.
 */
export function launchRun(o: { repo: string; ticket: string; worktree: string; env: NodeJS.ProcessEnv }): Launched {
  const paths = runPaths(o.repo, o.ticket, o.env);
  const child = spawnDetachedChalk({ args: ['run'], cwd: o.worktree, env: o.env, logFile: paths.runLog });
  const pid = child.pid as number;
  writeFileSync(paths.pid, `${pid}\n`);
  return {
    pid,
    onExit(cb) {
      child.once('exit', (code, signal) => {
        const n = signal ? (constants.signals[signal] ?? 15) : 0;
        cb(code ?? 128 + n);
      });
    },
  };
}
