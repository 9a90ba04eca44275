import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { UserError } from '../../errors.js';
import type { RunPaths } from '../../layout.js';
import { livePid, pidFileText, readPid } from '../../process/pid.js';

/**
 * The claim on a ticket: one live run per ticket, known by the pid file in
 * its run directory (which `chalk status` reads to say `running`).
 */

/** Refuses when another live process holds the ticket's pid file. */
export function refuseLiveRun(paths: RunPaths, ticket: string, self = process.pid): void {
  const pid = livePid(paths.pid);
  if (pid !== null && pid !== self) throw new UserError(`a run for ${ticket} is already active (pid ${pid})`);
}

export interface ClaimOptions {
  /** The claiming process id (default this one). */
  self?: number;
  /**
   * Registers the release to run if the process exits first (the CLI's edge:
   * `process.once('exit')`, so the sandbox's signal handlers exiting still
   * remove the pid file); returns its unregistration.
   */
  atExit?: (release: () => void) => () => void;
}

/**
 * Claims the ticket for this process: writes the pid, wipes and recreates
 * `io/`, and removes the pid file again when released (or, through `atExit`,
 * when the process exits first).
 */
export function claim(paths: RunPaths, ticket: string, o: ClaimOptions = {}): () => void {
  const self = o.self ?? process.pid;
  refuseLiveRun(paths, ticket, self);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.pid, pidFileText(self));
  rmSync(paths.io, { recursive: true, force: true });
  mkdirSync(paths.io, { recursive: true });
  const release = () => {
    try {
      if (readPid(paths.pid) === self) rmSync(paths.pid, { force: true });
    } catch {
      // already gone
    }
  };
  const forget = o.atExit?.(release) ?? (() => {});
  return () => {
    forget();
    release();
  };
}
