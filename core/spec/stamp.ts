import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { untickAll } from './checkpoints.js';
import { gitBlobHash } from './git-blob.js';

/**
 * The spec-check stamp: proof that the spec check passed for this spec, so
 * it is not asked again (and paid for again) until the spec changes.
 *
 * - Where: the file `spec-check.ok` in the ticket's run directory
 *   (`<state>/<repo>/runs/<TICKET>/spec-check.ok`), outside `io/`, which every
 *   run wipes. Written only when the check passes; `chalk check` deletes it
 *   first so the check always runs.
 * - What: the git blob hash of the spec with every checkpoint box shown open.
 *   Ticking a checkpoint (the agent's job) leaves the stamp valid; any other
 *   edit, to a checkpoint's words or to the context, invalidates it.
 */
export const STAMP_FILE = 'spec-check.ok';

export function specStamp(spec: string): string {
  return gitBlobHash(untickAll(spec));
}

/** The stamp last written at this path, or null. */
export function readStamp(stampPath: string): string | null {
  try {
    const text = readFileSync(stampPath, 'utf8').trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

/** True when the spec check passed before for a spec with these checkpoints: skip it. */
export function stampMatches(stampPath: string, spec: string): boolean {
  return readStamp(stampPath) === specStamp(spec);
}

export function writeStamp(stampPath: string, spec: string): void {
  mkdirSync(dirname(stampPath), { recursive: true });
  writeFileSync(stampPath, `${specStamp(spec)}\n`);
}

export function clearStamp(stampPath: string): void {
  rmSync(stampPath, { force: true });
}
