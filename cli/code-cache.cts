import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/*
 * Runs a CommonJS file (the `chalk status` bundle, dist/cli/light.cjs) with a V8 code cache, so
 * that what V8 compiled for one run is not compiled again by the next. Node 20 has no compile
 * cache for modules (module.enableCompileCache came in 22); vm.Script's cachedData is V8's own.
 *
 * The cache is code this process will run, and V8 checks only that cached data fits its
 * version, flags and the source's length, not what the data says. So a cache file is used only
 * when no one but this user could have written it: a regular file (never through a link) owned by
 * this user with no permission for anyone else, in a directory owned by this user that no one
 * else may write to. Its name holds a SHA-256 of node's version, the architecture and the
 * file's content, so a cache is only ever offered to the source it was made from; V8 refuses
 * data that does not fit (`cachedDataRejected`), and the file is then made again. Anything
 * wrong with the cache (missing, refused, unreadable, a directory that cannot be made) runs the
 * file without one: the cache can make a command faster, never change what it does.
 */

/** Larger than any code cache of the bundle (about half a megabyte); a bigger file is not read. */
const MAX_CACHE_BYTES = 32 * 1024 * 1024;

/** The cache file for `source` of the file named `name` (e.g. light-<32 hex>.v8). */
export function cacheFileName(name: string, source: string | Uint8Array): string {
  const key = createHash('sha256')
    .update(`${process.version}\0${process.arch}\0`)
    .update(source)
    .digest('hex')
    .slice(0, 32);
  return `${name}-${key}.v8`;
}

function currentUser(): number | null {
  return typeof process.getuid === 'function' ? process.getuid() : null;
}

/** True when `dir` is a real directory (not a link) of this user that no one else may write into. */
export function safeCacheDir(dir: string, uid: number): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The cache file's bytes when it is a regular file of this user, readable and writable by no
 * one else, opened without following a link (or blocking on a FIFO); null otherwise.
 */
export function readCacheFile(path: string, uid: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== uid || (st.mode & 0o077) !== 0 || st.size > MAX_CACHE_BYTES) return null;
    const data = Buffer.allocUnsafe(st.size);
    let at = 0;
    while (at < data.length) {
      const n = readSync(fd, data, at, data.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return at === data.length ? data : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Puts `data` in place as `dir/file` (a new 0600 file, never through a link, renamed over the
 * old one) in a 0700 directory this user owns, and removes the caches of other versions of
 * `name`. Does nothing when the directory is not safe (see safeCacheDir).
 */
export function writeCacheFile(dir: string, file: string, name: string, data: Buffer, uid: number): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!safeCacheDir(dir, uid)) return false;
    const tmp = join(dir, `.${file}.${process.pid}.tmp`);
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, file));
    for (const old of readdirSync(dir)) {
      if (old !== file && old.startsWith(`${name}-`) && old.endsWith('.v8')) unlinkSync(join(dir, old));
    }
    return true;
  } catch {
    return false;
  }
}

/** How a run went with the cache, and how to keep what it compiled. */
export interface CodeCacheRun {
  /** `used`: compiled from the cache; `refused`: V8 refused the cache; `none`: there was none (or none that was safe to read). */
  use: 'used' | 'refused' | 'none' | 'off';
  /**
   * Writes the cache from what has been compiled so far (the binary calls it as the process
   * exits, so the functions the command ran are in it), unless the cache was used. True when written.
   */
  save(): boolean;
}

/**
 * Runs the CommonJS file at `path` as `require` would (its own module object, `require`
 * resolving beside it), compiled with the code cache kept in `cacheDir` (null: none).
 * Throws what reading the file throws (ENOENT when it is absent) before running anything.
 */
export function requireWithCodeCache(path: string, cacheDir: string | null): CodeCacheRun {
  const bytes = readFileSync(path);
  // The bundle is ASCII (its build escapes the rest): then it is read as one byte a character,
  // with no UTF-8 decoding, and V8 keeps it that way.
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  const uid = currentUser();
  const name = basename(path).replace(/\.[^.]*$/, '');
  const file = cacheDir !== null && uid !== null ? cacheFileName(name, bytes) : null;
  const cached =
    cacheDir !== null && uid !== null && file !== null && safeCacheDir(cacheDir, uid)
      ? readCacheFile(join(cacheDir, file), uid)
      : null;
  const script = new Script(Module.wrap(source), { filename: path, ...(cached ? { cachedData: cached } : {}) });
  const use: CodeCacheRun['use'] =
    file === null ? 'off' : cached === null ? 'none' : script.cachedDataRejected ? 'refused' : 'used';
  const mod = new Module(path);
  mod.filename = path;
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(path), mod, path, dirname(path));
  return {
    use,
    save: () =>
      use !== 'used' &&
      cacheDir !== null &&
      uid !== null &&
      file !== null &&
      writeCacheFile(cacheDir, file, name, script.createCachedData(), uid),
  };
}
