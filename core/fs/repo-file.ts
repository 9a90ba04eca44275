import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { UserError } from '../errors.js';

/**
 * Reading a file a repository holds (`.chalk/config`, the textbook, prompt
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
      throw new UserError(`${shown}: ${here} is a symbolic link, which Chalk does not follow; ${FIX}`);
    }
    if (i < parts.length - 1 && !last.isDirectory()) {
      throw new UserError(`${shown}: ${here} is ${kindOf(last)}, not a directory`);
    }
  }
  if (!last?.isFile()) throw new UserError(`${shown} is ${last ? kindOf(last) : 'missing'}; ${FIX}`);
  checkSize(last, shown, opts.maxBytes);

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

/** Reads at most maxBytes; a file that grew past the cap since the fstat is refused. */
function readCapped(fd: number, shown: string, maxBytes: number): Buffer {
  const buf = Buffer.alloc(maxBytes + 1);
  let n = 0;
  for (;;) {
    const got = readSync(fd, buf, n, buf.length - n, null);
    if (got === 0) break;
    n += got;
    if (n > maxBytes) {
      throw new UserError(`${shown} is over the ${maxBytes}-byte limit; make it smaller`);
    }
  }
  return buf.subarray(0, n);
}
