import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { RunPaths } from '../layout.js';
import { alive, readPid } from '../process/pid.js';

/**
 * The claim on a ticket: one live run per ticket, known by the pid file in
 * its run directory (which `chalk status` reads to say `running`).
 */

/** Refuses when another live process holds the ticket's pid file. */
export function refuseLiveRun(paths: RunPaths, ticket: string, self = process.pid): void {
  const pid = readPid(paths.pid);
  if (pid !== null && pid !== self && alive(pid)) {
    throw new UserError(`a run for ${ticket} is already active (pid ${pid})`);
  }
}

/**
 * Claims the ticket for this process: writes the pid, wipes and recreates
 * `io/`, and removes the pid file again when the process exits (normally, or
 * through the sandbox's signal handlers, which exit the process).
 */
export function claim(paths: RunPaths, ticket: string, self = process.pid): () => void {
  refuseLiveRun(paths, ticket, self);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.pid, `${self}\n`);
  rmSync(paths.io, { recursive: true, force: true });
  mkdirSync(paths.io, { recursive: true });
  const release = () => {
    try {
      if (readFileSync(paths.pid, 'utf8').trim() === String(self)) rmSync(paths.pid, { force: true });
    } catch {
      // already gone
    }
  };
  process.once('exit', release);
  return () => {
    process.off('exit', release);
    release();
  };
}
