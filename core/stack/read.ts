import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { readRepoFile } from '../fs/repo-file.js';
import { type RepoFacts, STACK_FILES } from './detect.js';

/** The most of one file the rule reads (a lockfile is read only this far: its version is on top). */
const FILE_MAX = 256 * 1024;
/** Files read only for their first lines. */
const HEAD_ONLY: ReadonlySet<string> = new Set(['pnpm-lock.yaml', 'yarn.lock']);

/** Names in `dir`, directories with a trailing `/`; a symlink is listed as what it is, never followed. */
function names(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d) => (d.isDirectory() ? `${d.name}/` : d.name));
  } catch {
    return [];
  }
}

/**
 * The facts detect.ts decides on, read as hostile input: through core/fs/repo-file.ts (inside
 * the repository, no symlink, regular files, capped). A file that is refused is left out and
 * said in `skipped`, so a hostile README cannot stop `chalk init`.
 */
export function readStackFacts(root: string): { facts: RepoFacts; skipped: string[] } {
  const rootNames = names(root);
  const wanted = [...STACK_FILES, ...rootNames.filter((n) => /^(.*[-_])?requirements([-_].*)?\.txt$/.test(n))];
  const texts: Record<string, string> = {};
  const skipped: string[] = [];
  for (const file of wanted) {
    if (!rootNames.includes(file)) continue;
    try {
      const text = readRepoFile(root, file, { maxBytes: FILE_MAX, what: file, head: HEAD_ONLY.has(file) });
      if (text !== null) texts[file] = text;
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      skipped.push(err.message);
    }
  }
  const src = rootNames.includes('src/') ? names(join(root, 'src')) : [];
  return { facts: { root: rootNames, src, texts }, skipped };
}
