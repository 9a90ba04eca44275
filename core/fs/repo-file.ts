import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  type Stats,
} from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { UserError } from '../errors.js';
import { writeBeside } from './host-file.js';

/**
 * Reading and writing a file a repository holds (`.chalk/config`, the textbook, prompt
 * overrides) as hostile input: the path must stay inside the repository, no
 * component of it may be a symbolic link, the file must be a regular file
 * under a size cap. Anything else is refused with one line naming the file
 * and what to change, so a committed `.chalk/textbook.md -> ~/.ssh/id_ed25519`
 * never puts a host file into a prompt.
 */

export interface RepoFileOptions {
  /** The largest file accepted, in bytes. */
  maxBytes: number;
  /** What the file is, for the message: `CHALK_TEXTBOOK`, `the prompt override`, `.chalk/config`. */
  what: string;
  /** Read only the first maxBytes of a longer file instead of refusing it (a lockfile's header). */
  head?: boolean;
}

const FIX = 'replace it with a regular file in the repository';

/** What a non-regular file is, for a message. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** `CHALK_TEXTBOOK (/etc/passwd)`, or the path alone when it is what the file is called. */
const shownAs = (relPath: string, what: string) => (what === relPath ? relPath : `${what} (${relPath})`);

/** Who a message is about: the file as shown, then the component at fault when that is another name. */
const whoIs = (shown: string, here: string, relPath: string) =>
  here === relPath && shown === relPath ? shown : `${shown}: ${here}`;

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** The path's components, refused when it is absolute, empty or climbs out with `..`. */
export function repoPathParts(relPath: string, what: string): string[] {
  const shown = shownAs(relPath, what);
  if (relPath.includes('\0')) throw new UserError(`${what} contains a NUL byte; give a path inside the repository`);
  if (isAbsolute(relPath)) {
    throw new UserError(`${shown} is an absolute path; give a path relative to the repository root`);
  }
  const parts = relPath.split(/[/\\]+/).filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) {
    throw new UserError(`${shown} climbs out of the repository with '..'; give a path inside the repository`);
  }
  if (parts.length === 0) throw new UserError(`${shown} names no file; give a path inside the repository`);
  return parts;
}

/**
 * The text of `root/relPath`, or null when it does not exist. Throws a
 * UserError for an absolute path, a `..` segment, a symlink anywhere below
 * `root`, anything but a regular file, or a file over `maxBytes`. `root`
 * itself may be a link (it is the user's checkout, not repository content).
 */
export function readRepoFile(root: string, relPath: string, opts: RepoFileOptions): string | null {
  const parts = repoPathParts(relPath, opts.what);
  const shown = shownAs(relPath, opts.what);
  let path = root;
  let last: Stats | undefined;
  for (const [i, part] of parts.entries()) {
    path = join(path, part);
    const here = parts.slice(0, i + 1).join('/');
    try {
      last = lstatSync(path);
    } catch (err) {
      if (errno(err) === 'ENOENT') return null;
      if (errno(err) === 'ENOTDIR') throw new UserError(`${shown}: a component above ${here} is not a directory`);
      throw new UserError(`${shown} cannot be read: ${errno(err) ?? String(err)}`);
    }
    if (last.isSymbolicLink()) {
      throw new UserError(`${whoIs(shown, here, relPath)} is a symbolic link, which Chalk does not follow; ${FIX}`);
    }
    if (i < parts.length - 1 && !last.isDirectory()) {
      throw new UserError(`${shown}: ${here} is ${kindOf(last)}, not a directory`);
    }
  }
  if (!last?.isFile()) throw new UserError(`${shown} is ${last ? kindOf(last) : 'missing'}; ${FIX}`);
  if (!opts.head) checkSize(last, shown, opts.maxBytes);

  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in after the lstat must not hang the open.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    if (errno(err) === 'ELOOP') throw new UserError(`${shown} is a symbolic link, which Chalk does not follow; ${FIX}`);
    throw new UserError(`${shown} cannot be read: ${errno(err) ?? String(err)}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UserError(`${shown} is ${kindOf(st)}; ${FIX}`);
    if (st.ino !== last.ino || st.dev !== last.dev) {
      throw new UserError(`${shown} changed while it was being read; run the command again`);
    }
    if (opts.head) return readCapped(fd, shown, opts.maxBytes, true).toString('utf8');
    checkSize(st, shown, opts.maxBytes);
    return readCapped(fd, shown, opts.maxBytes).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function checkSize(st: Stats, shown: string, maxBytes: number): void {
  if (st.size > maxBytes) {
    throw new UserError(`${shown} is ${st.size} bytes, over the ${maxBytes}-byte limit; make it smaller`);
  }
}

/** Reads at most maxBytes; a file that grew past the cap since the fstat is refused (cut there with `head`). */
function readCapped(fd: number, shown: string, maxBytes: number, head = false): Buffer {
  const buf = Buffer.alloc(maxBytes + 1);
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, n, buf.length - n, null);
    if (got === 0) break;
    n += got;
    if (n > maxBytes && head) return buf.subarray(0, maxBytes);
    if (n > maxBytes) {
      throw new UserError(`${shown} is over the ${maxBytes}-byte limit; make it smaller`);
    }
  }
  return buf.subarray(0, n);
}

// --- writing ------------------------------------------------------------------

export interface RepoWriteOptions {
  /** What the file is, for the message (default: its path). */
  what?: string;
  /** An existing regular file is kept as it is (`keep`: create only) or replaced. */
  ifExists: 'keep' | 'replace';
}

export type RepoWrite = 'created' | 'kept' | 'replaced';

const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return null;
    throw err;
  }
};

/**
 * The one way the host writes into a repository or a worktree (`chalk init`'s files, the CI
 * gate, an ejected prompt, a new ticket's spec, a fleet's specs): the same path rules as the
 * reads, and nothing is written through a link. Every directory on the way must be a real
 * directory (a missing one is made, one level at a time); the file itself must be missing or a
 * regular file. The content goes into a new file beside it, which is then renamed over it
 * (keeping the mode of the file it replaces). Anything else is refused with one line naming the file.
 */
export function writeRepoFile(root: string, relPath: string, data: string, opts: RepoWriteOptions): RepoWrite {
  const what = opts.what ?? relPath;
  const parts = repoPathParts(relPath, what);
  const shown = shownAs(relPath, what);
  const whole = parts.join('/');
  const refuse = (here: string, st: Stats, isDir: boolean) => {
    const who = whoIs(shown, here, whole);
    const fix = isDir ? 'replace it with a directory in the repository' : FIX;
    const is = st.isSymbolicLink() ? 'a symbolic link, which Chalk does not follow' : kindOf(st);
    return new UserError(`${who} is ${is}; ${fix}`);
  };
  let dir = root;
  for (const [i, part] of parts.slice(0, -1).entries()) {
    dir = join(dir, part);
    const here = parts.slice(0, i + 1).join('/');
    let st = lstatOrNull(dir);
    if (!st) {
      try {
        mkdirSync(dir);
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw new UserError(`${shown}: cannot make ${here}: ${errno(err) ?? String(err)}`);
      }
      st = lstatSync(dir);
    }
    if (!st.isDirectory()) throw refuse(here, st, true);
  }
  const target = join(dir, parts[parts.length - 1] as string);
  const st = lstatOrNull(target);
  if (st && !st.isFile()) throw refuse(whole, st, false);
  if (st && opts.ifExists === 'keep') return 'kept';
  // Renamed over the target: whatever is there by then is replaced, never followed.
  renameSync(writeBeside(target, data, 0o666, st ? st.mode & 0o7777 : undefined), target);
  return st ? 'replaced' : 'created';
}
