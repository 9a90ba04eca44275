import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { writeHostFile } from './host-file.js';

/**
 * A JSON record Chalk keeps on this machine (the trust records): `empty` when there is none,
 * and `damaged(file)` thrown when the file is not JSON of the schema's shape.
 */
export function readJsonRecord<S extends z.ZodType>(
  file: string,
  schema: S,
  empty: z.infer<S>,
  damaged: (file: string) => Error,
): z.infer<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
    throw err;
  }
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: refused below like any other shape
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw damaged(file);
  return parsed.data;
}

/** Replaces the record: a new file (0600, in a 0700 directory) renamed over it. */
export function writeJsonRecord(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeHostFile(file, `${JSON.stringify(value, null, 2)}\n`);
}
