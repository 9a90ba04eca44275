import { mkdirSync, renameSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { alive, readPid } from './pid.js';

/** A holder that has made the lock directory but not yet written its pid gets this long. */
const UNWRITTEN_GRACE_MS = 5_000;

export class LockTimeout extends Error {
  override name = 'LockTimeout';
}

/**
 * A machine-wide lock: an atomically created directory holding its holder's pid.
 * A lock whose holder is dead is cleared (moved aside first, so two waiters that both
 * saw it stale cannot remove each other's fresh lock). Returns the release function.
 */
export async function acquireLock(path: string, timeoutMs: number): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const release = tryLock(path);
    if (release) return release;
    if (Date.now() > deadline) throw new LockTimeout(`timed out after ${Math.round(timeoutMs / 1000)}s on ${path}`);
    await sleep(50 + Math.floor(Math.random() * 50));
  }
}

/**
 * One attempt at the lock (a stale one is cleared first): the release function, or
 * null when a live process holds it.
 */
export function tryLock(path: string): (() => void) | null {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(path, { mode: 0o700 });
      writeFileSync(join(path, 'pid'), `${process.pid}\n`);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          unlinkSync(join(path, 'pid'));
          rmdirSync(path);
        } catch {
          rmSync(path, { recursive: true, force: true });
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (attempt === 0) clearIfStale(path);
  }
  return null;
}

export interface TurnOptions {
  /** The longest the caller waits for its turn, in ms (0: one attempt). */
  waitMs: number;
  /** How often the lock is tried again while waiting (ms). */
  pollMs?: number;
  /** The caller gave up: stop waiting. */
  signal?: AbortSignal;
}

/**
 * Waits for a turn at a lock several processes take turns at (a service that
 * answers one request at a time): the release function once it is ours, or null
 * when `waitMs` passed (or the signal aborted) first. Polls, since a directory
 * lock has no wake-up; the poll interval bounds how late a turn is noticed.
 */
export async function waitForTurn(path: string, opts: TurnOptions): Promise<(() => void) | null> {
  const until = Date.now() + Math.max(0, opts.waitMs);
  const poll = opts.pollMs ?? 20;
  for (;;) {
    if (opts.signal?.aborted) return null;
    const release = tryLock(path);
    if (release) return release;
    const left = until - Date.now();
    if (left <= 0) return null;
    await sleep(Math.min(poll, left));
  }
}

function clearIfStale(path: string): void {
  const pid = readPid(join(path, 'pid'));
  if (pid !== null && alive(pid)) return;
  if (pid === null) {
    try {
      if (Date.now() - statSync(path).mtimeMs < UNWRITTEN_GRACE_MS) return;
    } catch {
      return;
    }
  }
  const aside = `${path}.stale-${process.pid}-${Date.now()}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else cleared or took it
  }
  const moved = readPid(join(aside, 'pid'));
  if (moved !== null && moved !== pid && alive(moved)) {
    // A live holder took the lock between our look and the move: give it back.
    try {
      renameSync(aside, path);
      return;
    } catch {
      // A third process holds the path now; the live holder's lock is lost, it will still finish.
    }
  }
  rmSync(aside, { recursive: true, force: true });
}
