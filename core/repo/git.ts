import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  commonDir,
  commonDirAndRefs,
  currentBranchName,
  originHeadBranch,
  remoteUrl,
  showToplevel,
} from '../git/host-git.js';

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
  return checkoutOf(await commonDir(cwd));
}

/** The main checkout of a repository whose git common dir is `common`. */
export function checkoutOf(common: string): string {
  return basename(common) === '.git' ? dirname(common) : resolve(common);
}

/**
 * The repository as sandbox mirrors know it (`MirrorRepo`): the SHA-256 of its main checkout's
 * real path, whole (a mirror made from one repository is never another's), and that path.
 */
export function mirrorRepoOf(common: string): { key: string; root: string } {
  const real = realpathSync(checkoutOf(common));
  return { key: createHash('sha256').update(real).digest('hex'), root: real };
}

/**
 * The repository's key, `<name>-<8 hex>`: the main checkout's folder name (characters other
 * than letters, digits, `_`, `.` and `-` turned into `-`) and the first 8 hex digits of the
 * SHA-256 of the main checkout's real absolute path. Two repositories whose checkouts share a
 * folder name (~/a/shop, ~/b/shop) get different keys, so they never share a state directory,
 * a container, a label or a database row; every worktree of one repository gets the same key.
 * The one rule: state paths, container names and labels, and the store's `repo` column all use it.
 */
export function repoKey(mainCheckout: string): string {
  const real = realpathSync(mainCheckout);
  const name =
    basename(real)
      .replace(/\.git$/, '')
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 40) || 'repo';
  return `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 8)}`;
}

/** `<repo>`: the key (`repoKey`) of the repository `cwd` is in, the same from any of its worktrees. */
export async function repoName(cwd = process.cwd()): Promise<string> {
  return repoKey(await mainRoot(cwd));
}

/** `repoName` and the local branches named `<prefix>...` (`detention/`), asked of one git process. */
export async function repoNameAndBranches(cwd: string, prefix: string): Promise<{ repo: string; branches: string[] }> {
  const { commonDir: common, refs } = await commonDirAndRefs(cwd, `refs/heads/${prefix}`);
  if (common === '') throw new Error('git rev-parse failed: it printed no git directory');
  return { repo: repoKey(checkoutOf(common)), branches: refs.map((r) => r.slice('refs/heads/'.length)) };
}

export async function currentBranch(cwd = process.cwd()): Promise<string | null> {
  return currentBranchName(cwd);
}

/**
 * The branch tickets start from, as the repository says it: origin's HEAD (what a clone
 * checks out), else the branch checked out now unless it is one of Chalk's own; null when neither.
 */
export async function baseBranchOf(cwd: string): Promise<{ branch: string; from: string } | null> {
  const origin = await originHeadBranch(cwd);
  if (origin) return { branch: origin, from: "origin's HEAD" };
  const current = await currentBranchName(cwd);
  if (current && !/^(chalk|detention|tutoring)\//.test(current)) return { branch: current, from: 'the current branch' };
  return null;
}

export async function originUrl(cwd = process.cwd()): Promise<string | null> {
  return remoteUrl(cwd, 'origin');
}

export const TICKET_RE = /^[A-Z][A-Z0-9]+-[0-9]+$/;

/** The ticket key a one-line mark file holds (e.g. a run's `fleet` mark: its epic), or null when missing or not a key. */
export function ticketKeyIn(path: string): string | null {
  try {
    const key = readFileSync(path, 'utf8').slice(0, 200).trim();
    return TICKET_RE.test(key) ? key : null;
  } catch {
    return null;
  }
}
/** A run's ticket: the first ticket-shaped word in its branch name. */
export function ticketFromBranch(branch: string): string | null {
  return /[A-Z][A-Z0-9]+-[0-9]+/.exec(branch)?.[0] ?? null;
}
