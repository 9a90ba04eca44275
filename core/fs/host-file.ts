import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writing files on the host that hold what came out of a sandbox (logs,
 * answers, bundles). Each write goes to a new file beside the target, opened
 * with O_EXCL and O_NOFOLLOW, then renamed over the target: a symbolic link
 * planted at the target is replaced, never followed, and a reader never sees
 * half a file.
 */

const FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

let seq = 0;
const tempBeside = (path: string) => join(dirname(path), `.${basename(path)}.${process.pid}.${seq++}.tmp`);

/**
 * Writes `data` to a new regular file beside `path` (O_EXCL, O_NOFOLLOW; `mode`, or exactly
 * `exactMode` whatever the umask) and returns its name, for the caller to rename or link into place.
 */
export function writeBeside(path: string, data: string | Uint8Array, mode = 0o600, exactMode?: number): string {
  const tmp = tempBeside(path);
  const fd = openSync(tmp, FLAGS, mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    if (exactMode !== undefined) fchmodSync(fd, exactMode);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  return tmp;
}

/** Writes `data` to `path` as a new regular file (mode 0600 by default). */
export function writeHostFile(path: string, data: string | Uint8Array, mode = 0o600): void {
  renameSync(writeBeside(path, data, mode), path);
}

/** The same for a file that is meant to be new (a bundle): any earlier one is replaced. */
export const writeNewFile = writeHostFile;

/** A log written as output arrives, holding at most `capBytes`, the closing note included; `close()` puts it in place. */
export interface CappedLog {
  write(chunk: string | Uint8Array): void;
  /** Bytes that did not fit. */
  readonly dropped: number;
  close(note?: string): void;
}

/** Opens a capped log for `path` (in place on `close`). */
export function openCappedLog(path: string, capBytes: number): CappedLog {
  const tmp = tempBeside(path);
  const fd = openSync(tmp, FLAGS, 0o600);
  let written = 0;
  let dropped = 0;
  let closed = false;
  return {
    write(chunk) {
      if (closed) return;
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const room = capBytes - written;
      if (room <= 0) {
        dropped += b.length;
        return;
      }
      const part = b.length <= room ? b : b.subarray(0, room);
      writeSync(fd, part);
      written += part.length;
      dropped += b.length - part.length;
    },
    get dropped() {
      return dropped;
    },
    close(note) {
      if (closed) return;
      closed = true;
      if (note) {
        // The note counts against the cap too: the end of what was kept makes room for it.
        const n = Buffer.from(note).subarray(0, capBytes);
        const keep = Math.min(written, capBytes - n.length);
        if (keep < written) {
          ftruncateSync(fd, keep);
          dropped += written - keep;
          written = keep;
        }
        writeSync(fd, n, 0, n.length, keep);
      }
      closeSync(fd);
      renameSync(tmp, path);
    },
  };
}

/**
 * A host file's bytes when it is a regular file of at most `maxBytes`, opened
 * without following a link (or blocking on a FIFO) and checked on the
 * descriptor; null otherwise (absent, a link, a directory, too big).
 */
export function readHostFile(path: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > maxBytes) return null;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}
