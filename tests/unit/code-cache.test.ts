import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheFileName, requireWithCodeCache } from '../../cli/code-cache.cjs';
import { tempDir } from '../helpers/cli.js';

/**
 * The V8 code cache the binary runs `chalk status`'s bundle with (cli/code-cache.cts). V8 checks
 * only that cached data fits its version, flags and the source's length, so the cache is code
 * this user will run: it is read only when no one else could have written it.
 */

const SOURCE = `globalThis.__codeCacheRuns = (globalThis.__codeCacheRuns ?? 0) + 1;
module.exports.twice = (n) => n * 2;
function unused(a) { return [a, a].map((x) => x + 1).join(','); }
module.exports.unused = unused;
`;

function fixture(source = SOURCE) {
  const dir = tempDir('chalk-code-cache-');
  const file = join(dir, 'bundle.cjs');
  writeFileSync(file, source);
  const cacheDir = join(dir, 'state', 'code-cache');
  return { file, cacheDir, cacheFile: join(cacheDir, cacheFileName('bundle', source)) };
}

const runs = () => (globalThis as { __codeCacheRuns?: number }).__codeCacheRuns ?? 0;
const mode = (p: string) => statSync(p).mode & 0o777;

/** A cache of SOURCE that V8 accepts, made by a first run. */
function madeCache(f: ReturnType<typeof fixture>): Buffer {
  const first = requireWithCodeCache(f.file, f.cacheDir);
  expect(first.use).toBe('none');
  expect(first.save()).toBe(true);
  return readFileSync(f.cacheFile);
}

describe('the code cache', () => {
  it('is written after a first run (0600 in a 0700 directory) and used by the next, which runs the file', () => {
    const f = fixture();
    const before = runs();
    madeCache(f);
    expect(mode(f.cacheDir)).toBe(0o700);
    expect(mode(f.cacheFile)).toBe(0o600);
    const second = requireWithCodeCache(f.file, f.cacheDir);
    expect(second.use).toBe('used');
    expect(second.save()).toBe(false); // nothing to write: the cache was used
    expect(runs()).toBe(before + 2);
  });

  it('is keyed by the content: a changed file gets its own cache, and the old one is removed when it is written', () => {
    const f = fixture();
    madeCache(f);
    writeFileSync(f.file, `${SOURCE}// changed\n`);
    const changed = requireWithCodeCache(f.file, f.cacheDir);
    expect(changed.use).toBe('none');
    expect(changed.save()).toBe(true);
    expect(readdirSync(f.cacheDir)).toEqual([cacheFileName('bundle', `${SOURCE}// changed\n`)]);
  });

  it('a damaged cache is refused by V8: the file runs from its source and the cache is made again', () => {
    // A source this process never compiled: V8 keeps what it compiled, and would not look at the cache.
    const source = `${SOURCE}// ${process.pid} ${Date.now()} damaged\n`;
    const f = fixture(source);
    mkdirSync(f.cacheDir, { recursive: true, mode: 0o700 });
    writeFileSync(f.cacheFile, Buffer.alloc(4096, 0x5a), { mode: 0o600 });
    const before = runs();
    const r = requireWithCodeCache(f.file, f.cacheDir);
    expect(r.use).toBe('refused');
    expect(runs()).toBe(before + 1);
    expect(r.save()).toBe(true);
    expect(readFileSync(f.cacheFile).equals(Buffer.alloc(4096, 0x5a))).toBe(false);
  });

  it('a cache others may write is never read, though V8 would accept it, and is replaced by a private one', () => {
    const f = fixture();
    madeCache(f);
    chmodSync(f.cacheFile, 0o644); // others may read it: a cache is this user's alone
    expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('none');
    chmodSync(f.cacheFile, 0o620);
    const r = requireWithCodeCache(f.file, f.cacheDir);
    expect(r.use).toBe('none');
    expect(r.save()).toBe(true);
    expect(mode(f.cacheFile)).toBe(0o600);
    expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('used');
  });

  it('a cache through a symbolic link is never read', () => {
    const f = fixture();
    const good = madeCache(f);
    const elsewhere = join(tempDir(), 'planted.v8');
    writeFileSync(elsewhere, good, { mode: 0o600 });
    rmSync(f.cacheFile);
    symlinkSync(elsewhere, f.cacheFile);
    expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('none');
  });

  it('a directory others may write to is neither read nor written', () => {
    const f = fixture();
    madeCache(f);
    chmodSync(f.cacheDir, 0o777);
    const r = requireWithCodeCache(f.file, f.cacheDir);
    expect(r.use).toBe('none');
    expect(r.save()).toBe(false);
    chmodSync(f.cacheDir, 0o700);
    expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('used');
  });

  it.runIf(process.getuid?.() === 0)(
    'a cache or a directory owned by another user is never read, though V8 would accept the cache (needs root to give it away)',
    () => {
      const f = fixture();
      madeCache(f);
      chownSync(f.cacheFile, 12345, 12345);
      expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('none');
      chownSync(f.cacheFile, 0, 0);
      expect(requireWithCodeCache(f.file, f.cacheDir).use).toBe('used');
      chownSync(f.cacheDir, 12345, 12345);
      const r = requireWithCodeCache(f.file, f.cacheDir);
      expect(r.use).toBe('none');
      expect(r.save()).toBe(false);
    },
  );

  it('without a cache directory the file just runs', () => {
    const f = fixture();
    const before = runs();
    const r = requireWithCodeCache(f.file, null);
    expect(r.use).toBe('off');
    expect(r.save()).toBe(false);
    expect(runs()).toBe(before + 1);
  });

  it('a file that is not there is an error before anything runs', () => {
    const f = fixture();
    const before = runs();
    expect(() => requireWithCodeCache(join(f.file, '..', 'absent.cjs'), f.cacheDir)).toThrow(/ENOENT/);
    expect(runs()).toBe(before);
  });
});
