import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { livePid, pidFileText, readPid } from '../process/pid.js';

/**
 * The supervisor's pid file is also its lock: made by a hard link of a private file, which
 * fails when the file exists, so of two supervisors started at once exactly one holds it.
 * A dead holder's file is moved aside (a rename only one process wins) and the link tried again.
 */
export function acquirePidLock(path: string, self = process.pid): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
    const tmp = `${path}.${self}.tmp`;
    writeFileSync(tmp, pidFileText(self));
    try {
      linkSync(tmp, path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
    const holder = readPid(path);
    if (holder === self) return true;
    if (holder !== null && livePid(path) === holder) return false;
    const aside = `${path}.stale.${self}`;
    try {
      renameSync(path, aside);
    } catch {
      continue; // another process moved it first
    }
    // What was moved may already be a live newcomer's lock: put it back and let it win.
    const moved = readPid(aside);
    if (moved !== null && moved !== holder && livePid(aside) === moved) {
      try {
        linkSync(aside, path);
      } catch {}
      rmSync(aside, { force: true });
      return false;
    }
    rmSync(aside, { force: true });
  }
  return false;
}

/** Removes the lock if this process holds it. */
export function releasePidLock(path: string, self = process.pid): void {
  try {
    if (readPid(path) === self) rmSync(path, { force: true });
  } catch {}
}

/** The live supervisor's pid (written on this boot), or null. */
export function liveHolder(path: string): number | null {
  return livePid(path);
}
