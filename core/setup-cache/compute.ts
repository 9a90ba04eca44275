import { realpathSync } from 'node:fs';
import type { Config } from '../config/config.js';
import type { HostGit } from '../ports/host-git.js';
import type { Sandbox } from '../ports/sandbox.js';
import { checkoutOf } from '../repo/git.js';
import { setupInputs, setupKey } from './key.js';

/** What keys a saved setup state, read on the host: the configuration, host git and the sandbox's image id. */
export interface KeySources {
  config: Config;
  git: HostGit;
  sandbox: Sandbox;
}

/** The directories the cache keeps (`CHALK_SETUP_CACHE_DIRS`). */
export const cacheDirs = (config: Config): string[] => config.list('CHALK_SETUP_CACHE_DIRS');

/** A key and what it was made from, as an entry's record keeps them. */
export interface Keyed {
  key: string;
  root: string;
  image: string;
  command: string;
  inputs: number;
}

/**
 * The key of the state a sandbox cloned at `rev` of the repository `root` (any of its
 * worktrees) would start from; null when there is none to have: no setup command, the
 * cache off, or a sandbox that cannot name its image.
 */
export async function setupKeyFor(s: KeySources, o: { root: string; rev: string }): Promise<Keyed | null> {
  const command = s.config.str('CHALK_SETUP_CMD');
  if (command.trim() === '' || !s.config.bool('CHALK_SETUP_CACHE')) return null;
  const imageId = (await s.sandbox.imageId?.()) ?? null;
  if (!imageId) return null;
  const repoRoot = realpathSync(checkoutOf(await s.git.commonDir(o.root)));
  const inputs = setupInputs(await s.git.treeEntries(o.root, o.rev));
  const key = setupKey({ repoRoot, imageId, command, dirs: cacheDirs(s.config), inputs });
  return { key, root: repoRoot, image: imageId, command, inputs: inputs.length };
}
