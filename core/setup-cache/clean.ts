import { existsSync, readdirSync, rmSync } from 'node:fs';
import { setupCacheDir, stateDir } from '../layout.js';
import { type KeySources, setupKeyFor } from './compute.js';
import { staleKeys } from './stale.js';
import { listEntries, removeEntry, strayFiles } from './store.js';

/** A file no entry owns is removed once it is this old (an archive a killed run was writing is younger). */
const STRAY_AGE_MS = 24 * 3600 * 1000;

export interface CleanedStates {
  removed: number;
  bytes: number;
  kept: number;
  /** Why what was kept is kept: the base branch's current key, or (that unknown) the last use. */
  keptAs: 'current' | 'recent';
}

/** The key a sandbox of the base branch would restore now (`origin/<base>`, else `<base>`); null when it cannot be known. */
async function currentKey(s: KeySources, root: string, baseBranch: string): Promise<string | null> {
  try {
    for (const ref of [`refs/remotes/origin/${baseBranch}`, `refs/heads/${baseBranch}`]) {
      const rev = await s.git.resolveCommit(root, ref);
      if (rev) return (await setupKeyFor(s, { root, rev }))?.key ?? null;
    }
  } catch {
    // No key to compare with: staleKeys keeps the most recently used.
  }
  return null;
}

/**
 * `chalk cleanup`'s part of the setup cache: the repository's saved states but the one
 * its base branch would restore now (`all`: every one), the states of repositories whose
 * checkout is gone, and day-old files no entry owns.
 */
export async function cleanSetupStates(
  s: KeySources,
  o: { repo: string; root: string; baseBranch: string; all: boolean; env?: NodeJS.ProcessEnv },
): Promise<CleanedStates> {
  const env = o.env ?? process.env;
  const mine = setupCacheDir(o.repo, env);
  const entries = listEntries(mine);
  const current = o.all ? null : await currentKey(s, o.root, o.baseBranch);
  const stale = new Set(o.all ? entries.map((e) => e.key) : staleKeys(entries, current));
  const out: CleanedStates = { removed: 0, bytes: 0, kept: 0, keptAs: current ? 'current' : 'recent' };
  const drop = (dir: string, e: { key: string; bytes: number }) => {
    removeEntry(dir, e.key);
    out.removed++;
    out.bytes += e.bytes;
  };
  for (const e of entries) {
    if (stale.has(e.key)) drop(mine, e);
    else out.kept++;
  }
  let repos: string[] = [];
  try {
    repos = readdirSync(stateDir(env));
  } catch {
    // No state yet.
  }
  const now = new Date();
  for (const repo of repos) {
    const dir = setupCacheDir(repo, env);
    for (const e of repo === o.repo ? [] : listEntries(dir)) if (!existsSync(e.root)) drop(dir, e);
    for (const p of strayFiles(dir, STRAY_AGE_MS, now)) rmSync(p, { force: true, recursive: true });
  }
  return out;
}
