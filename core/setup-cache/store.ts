import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeHostFile } from '../fs/host-file.js';

/**
 * A repository's saved setup states on the host (`<state>/<repo>/setup-cache/`, core/layout.ts):
 * `<KEY>.tar`, the archive the sandbox streamed out (never unpacked here), and `<KEY>.json`,
 * what it was made from and when it was last used. An entry is both, the archive a regular
 * file of the size its record says; anything else there is not an entry.
 */

const KEY = /^[0-9a-f]{64}$/;

const Record = z.object({
  key: z.string().regex(KEY),
  /** The main checkout's real path. */
  root: z.string(),
  image: z.string(),
  command: z.string(),
  /** How many manifests and lockfiles were in the key. */
  inputs: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  createdAt: z.string(),
  usedAt: z.string(),
});

export type CacheEntry = z.infer<typeof Record>;
/** An entry found on disk, with its archive's path. */
export type FoundEntry = CacheEntry & { archive: string };

const archive = (dir: string, key: string) => join(dir, `${key}.tar`);
const record = (dir: string, key: string) => join(dir, `${key}.json`);

/** The record's text when it is a small regular file (never through a link). */
function readRecord(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > 64 * 1024) return null;
    const buf = Buffer.alloc(st.size);
    readSync(fd, buf, 0, st.size, 0);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The entry for `key`, or null when there is none whole. */
export function findEntry(dir: string, key: string): FoundEntry | null {
  if (!KEY.test(key)) return null;
  const text = readRecord(record(dir, key));
  if (text === null) return null;
  let parsed: CacheEntry;
  try {
    parsed = Record.parse(JSON.parse(text));
  } catch {
    return null;
  }
  try {
    const st = lstatSync(archive(dir, key));
    if (!st.isFile() || st.size !== parsed.bytes || parsed.key !== key) return null;
  } catch {
    return null;
  }
  return { ...parsed, archive: archive(dir, key) };
}

/** Every whole entry of the directory. */
export function listEntries(dir: string): FoundEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .map((n) => findEntry(dir, n.slice(0, -'.json'.length)))
    .filter((e): e is FoundEntry => e !== null);
}

/** A path for a new archive in the directory (made, mode 0700), not yet an entry. */
export function newArchivePath(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return join(dir, `.${randomBytes(8).toString('hex')}.tar.tmp`);
}

/** Makes the archive at `tmp` the entry `e.key`: the archive first, then its record. */
export function keepEntry(dir: string, tmp: string, e: CacheEntry): void {
  renameSync(tmp, archive(dir, e.key));
  writeHostFile(record(dir, e.key), `${JSON.stringify(Record.parse(e))}\n`);
}

/** Records that the entry was used now. */
export function touchEntry(dir: string, e: CacheEntry, now: Date): void {
  // Parsing drops what is not the record's (a found entry's archive path).
  writeHostFile(record(dir, e.key), `${JSON.stringify(Record.parse({ ...e, usedAt: now.toISOString() }))}\n`);
}

/** Removes an entry: its record first (it is then no entry), then its archive. */
export function removeEntry(dir: string, key: string): void {
  if (!KEY.test(key)) return;
  rmSync(record(dir, key), { force: true });
  rmSync(archive(dir, key), { force: true });
}

/** Leftovers that are no entry: archives being written by a run that died, records or archives without their other half. */
export function strayFiles(dir: string, olderThanMs: number, now: Date): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const whole = new Set(listEntries(dir).flatMap((e) => [`${e.key}.tar`, `${e.key}.json`]));
  return names
    .filter((n) => !whole.has(n))
    .map((n) => join(dir, n))
    .filter((p) => {
      try {
        return now.getTime() - lstatSync(p).mtimeMs > olderThanMs;
      } catch {
        return false;
      }
    });
}
