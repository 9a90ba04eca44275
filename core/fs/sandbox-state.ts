import { closeSync, constants, createReadStream, fstatSync, openSync, type ReadStream, rmSync } from 'node:fs';
import type { SavedState } from '../ports/sandbox.js';

/**
 * The host's half of `SandboxSession.saveState` and `restoreState`, the same for every
 * sandbox: the archive a sandbox streams out is written to a new file (never through a
 * link planted at its name) and is never unpacked on the host; what it reads back in is a
 * regular file it opened without following a link.
 */

const NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Opens `dest` as a new file (mode 0600) for a saved state; throws when anything is there. */
export function openStateFile(dest: string): number {
  return openSync(dest, NEW, 0o600);
}

const MIB = 1024 * 1024;

/** What a save's exec means: the state kept, or why not (one line); `dest` is removed when not kept. */
export function stateOutcome(
  r: { exitCode: number; timedOut: boolean; outputCapped?: boolean; stderr: string; bytes: number },
  dest: string,
  maxBytes: number,
): SavedState {
  const why = r.outputCapped
    ? `it is over the cap of ${Math.floor(maxBytes / MIB)} MiB (CHALK_SETUP_CACHE_MB)`
    : r.timedOut
      ? 'saving it timed out'
      : r.exitCode !== 0
        ? `saving it failed (exit ${r.exitCode}${lastLine(r.stderr) ? `: ${lastLine(r.stderr)}` : ''})`
        : null;
  if (why === null) return { saved: true, bytes: r.bytes };
  rmSync(dest, { force: true });
  return { saved: false, why };
}

/** The last line a command printed, cut short (every line Chalk prints passes forTerminal). */
const lastLine = (s: string) => (s.trim().split('\n').pop() ?? '').slice(0, 200);

/** Runs `write(fd)` into a new file at `dest`, closing it either way; `dest` is removed when `write` throws. */
export async function writeState<T>(dest: string, write: (fd: number) => Promise<T>): Promise<T> {
  const fd = openStateFile(dest);
  try {
    return await write(fd);
  } catch (err) {
    rmSync(dest, { force: true });
    throw err;
  } finally {
    closeSync(fd);
  }
}

/** A saved state to stream into a sandbox: a regular file, opened without following a link. */
export function readState(src: string): ReadStream {
  const fd = openSync(src, constants.O_RDONLY | constants.O_NOFOLLOW);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new Error(`${src} is not a regular file`);
  }
  return createReadStream('', { fd });
}
