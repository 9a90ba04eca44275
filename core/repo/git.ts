import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { commonDir, currentBranchName, remoteUrl, showToplevel } from '../git/host-git.js';

/**
 * The top of the current worktree, or null outside a git repository: the
 * nearest directory holding `.git` (a directory, or a file in a linked
 * worktree). Walking up instead of spawning git keeps start-up fast.
 */
export async function worktreeRoot(cwd = process.cwd()): Promise<string | null> {
  if (process.env.GIT_DIR) {
    return showToplevel(cwd);
  }
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The main checkout's root, the same from any linked worktree (derived from git's common dir). */
export async function mainRoot(cwd = process.cwd()): Promise<string> {
  const common = await commonDir(cwd);
  return basename(common) === '.git' ? dirname(common) : resolve(common);
}

/** `<repo>`: the basename of the main checkout, used in state paths and container names. */
export async function repoName(cwd = process.cwd()): Promise<string> {
  return basename(await mainRoot(cwd)).replace(/\.git$/, '');
}

export async function currentBranch(cwd = process.cwd()): Promise<string | null> {
  return currentBranchName(cwd);
}

export async function originUrl(cwd = process.cwd()): Promise<string | null> {
  return remoteUrl(cwd, 'origin');
}

export const TICKET_RE = /^[A-Z][A-Z0-9]+-[0-9]+$/;
/** A run's ticket: the first ticket-shaped word in its branch name. */
export function ticketFromBranch(branch: string): string | null {
  return /[A-Z][A-Z0-9]+-[0-9]+/.exec(branch)?.[0] ?? null;
}
