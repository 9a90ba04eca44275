import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readHostFile, writeHostFile } from '../../fs/host-file.js';
import type { BaseResult } from './base-rules.js';

/**
 * The host's cache of the rubric's result on a base commit, per image and
 * commands: `<state>/<repo>/baseline/<key>.json` (core/layout.ts), so a second
 * run from the same base (another ticket, a resumed run, office hours) does not
 * run the rubric on it again. What is in it came out of a sandbox (test IDs, an
 * error line): it is written through host-file.ts (a planted link is replaced,
 * never followed), read only as a regular file under a cap, checked against a
 * schema with caps on every list and text, and anything else is a miss.
 */

const VERSION = 1;
/** Most entries kept; the oldest go first. */
export const CACHE_ENTRIES = 64;
/** A cached result over this is not read (nor written). */
const MAX_BYTES = 8 * 1024 * 1024;
/** Most failing tests cached, and longest ID: a base past them is not cached. */
const MAX_TESTS = 20_000;
const MAX_TEXT = 2_000;

const text = z.string().max(MAX_TEXT);
const ENTRY = z
  .object({
    v: z.literal(VERSION),
    key: z.string().regex(/^[0-9a-f]{64}$/),
    commit: z.string().regex(/^[0-9a-f]{40,64}$/),
    result: z
      .object({
        exitCode: z.number().int().min(0).max(255),
        tests: z.array(text.min(1)).max(MAX_TESTS).nullable(),
        firstError: text,
        environment: z
          .object({ command: text.nullable(), line: text, exitCode: z.number().int().min(0).max(255) })
          .strict()
          .nullable(),
        chalkFiles: z.array(text).max(10),
        stopped: z.enum(['capped', 'timeout']).nullable(),
        made: z.array(text.min(1)).max(200),
      })
      .strict(),
  })
  .strict();

/** What the result depends on, hashed: the base commit, the image, the rubric, the setup, the report. */
export interface BaseKey {
  commit: string;
  /** The image's own id when the sandbox can say (a rebuilt image is another key), else its name. */
  image: string;
  rubric: string;
  setup: string;
  report: string;
}

export const cacheKey = (k: BaseKey): string =>
  createHash('sha256')
    .update(JSON.stringify([VERSION, k.commit, k.image, k.rubric, k.setup, k.report]))
    .digest('hex');

/** The cached result for `key`, or null (absent, unreadable, or not an entry of this key). */
export function readBaseCache(dir: string, key: string, commit: string): BaseResult | null {
  const bytes = readHostFile(join(dir, `${key}.json`), MAX_BYTES);
  if (bytes === null) return null;
  const body = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const entry = ENTRY.safeParse(parsed);
  if (!entry.success || entry.data.key !== key || entry.data.commit !== commit) return null;
  return entry.data.result;
}

/** Caches `result` for `key` (best effort: a result past the caps, or a directory that is not one, is not cached). */
export function writeBaseCache(dir: string, key: string, commit: string, result: BaseResult): boolean {
  const entry = { v: VERSION, key, commit, result };
  if (!ENTRY.safeParse(entry).success) return false;
  const body = `${JSON.stringify(entry)}\n`;
  if (Buffer.byteLength(body) > MAX_BYTES) return false;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!lstatSync(dir).isDirectory()) return false;
    writeHostFile(join(dir, `${key}.json`), body);
    prune(dir);
    return true;
  } catch {
    return false;
  }
}

/** Keeps the newest CACHE_ENTRIES entries. */
function prune(dir: string): void {
  const entries = readdirSync(dir)
    .filter((f) => /^[0-9a-f]{64}\.json$/.test(f))
    .map((f) => {
      try {
        return { f, at: statSync(join(dir, f)).mtimeMs };
      } catch {
        return { f, at: 0 };
      }
    })
    .sort((a, b) => b.at - a.at || a.f.localeCompare(b.f));
  for (const { f } of entries.slice(CACHE_ENTRIES)) rmSync(join(dir, f), { force: true });
}
