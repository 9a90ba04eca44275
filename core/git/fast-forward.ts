import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BundleImportError } from '../ports/host-git.js';
import { runOk } from '../process/run.js';
import { filterDrivers, hostGit, hostGitOk, oneLine, revParse } from './host-git.js';

/**
 * The fast-forward of the checked-out ticket branch to a checked tip, and the
 * promise that goes with it: a refused or failed fast-forward leaves the
 * branch, the index and the worktree as they were. Before git writes anything,
 * every path the tip adds must be free (git would silently replace an ignored
 * file such as `.env`, or a directory holding one), no ancestor of it may be
 * anything but a real directory, and no path it changes may have changes of
 * the person's. If git then fails part way (a path the file system refuses, a
 * full disk), what it wrote is taken away again: the files and directories it
 * created are removed and the ones it replaced are written back from the index.
 */

const refuse = (reason: 'worktree' | 'git' | 'head-moved', message: string) => new BundleImportError(reason, message);
const short = (sha: string) => sha.slice(0, 12);
/** Git's own message, cut: a path thousands of directories deep makes a line thousands of characters long. */
const clip = (text: string, max = 100) => {
  const line = oneLine(text);
  return line.length > max ? `${line.slice(0, max)}...` : line;
};
/** Paths per `rm` call. */
const CHUNK = 500;

export interface TreeChanges {
  /** Paths the tip has and the base does not. */
  added: string[];
  /** Paths the base has that the tip changes or removes. */
  present: string[];
  /** Of those, the ones the tip removes. */
  deleted: Set<string>;
}

/** What `tip` changes against `base` (read in any repository that has both), by path. */
export async function treeChanges(cwd: string, base: string, tip: string): Promise<TreeChanges> {
  const r = await hostGit(['diff-tree', '-r', '-z', '--no-renames', '--name-status', base, tip], { cwd });
  if (r.code !== 0) throw refuse('git', `could not compare ${short(base)} with ${short(tip)}: ${clip(r.stderr)}`);
  const fields = r.stdout.split('\0');
  const out: TreeChanges = { added: [], present: [], deleted: new Set() };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [status = '', path = ''] = [fields[i], fields[i + 1]];
    if (status === 'A') out.added.push(path);
    else {
      out.present.push(path);
      if (status === 'D') out.deleted.add(path);
    }
  }
  return out;
}

const show = (p: string) => JSON.stringify(p.length > 80 ? `${p.slice(0, 80)}...` : p);

/** The first file under `dir` (repository-relative) that is not one of `tracked`, or null. */
async function untrackedUnder(cwd: string, dir: string, tracked: ReadonlySet<string>): Promise<string | null> {
  for (const e of await readdir(join(cwd, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      const found = await untrackedUnder(cwd, rel, tracked);
      if (found) return found;
    } else if (!tracked.has(rel)) return rel;
  }
  return null;
}

/**
 * What stands in the way of writing the tip's new paths, or null; and the paths the
 * fast-forward will create from nothing (the topmost of each), which a failure removes again.
 */
async function obstacles(cwd: string, ch: TreeChanges): Promise<{ obstacle: string | null; fresh: string[] }> {
  const seen = new Map<string, Awaited<ReturnType<typeof lstat>> | null>();
  const stat = async (rel: string) => {
    if (!seen.has(rel)) seen.set(rel, await lstat(join(cwd, rel)).catch(() => null));
    return seen.get(rel) ?? null;
  };
  const fresh = new Set<string>();
  for (const path of ch.added) {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      const st = await stat(rel);
      if (!st) {
        fresh.add(rel);
        break;
      }
      if (i < parts.length) {
        if (st.isDirectory()) continue;
        // A tracked file or symlink the tip turns into a directory: git replaces it.
        if (ch.deleted.has(rel)) {
          fresh.add(rel);
          break;
        }
        return { obstacle: `${show(rel)} is in the way and is not a directory git tracks`, fresh: [] };
      }
      // The path itself is there: only a tracked directory the tip turns into a file may be.
      const inside = st.isDirectory() ? await untrackedUnder(cwd, rel, ch.deleted) : rel;
      if (inside !== null) return { obstacle: `it would replace ${show(inside)}, which git does not track`, fresh: [] };
      fresh.add(rel);
    }
  }
  return { obstacle: null, fresh: [...fresh] };
}

/** What a fast-forward needs to know of the worktree before it: its filter drivers, the person's changes. */
export interface WorktreeFacts {
  drivers: readonly string[];
  /** Tracked paths with changes of the person's, staged or not. */
  changed: readonly string[];
}

/**
 * The worktree's filter drivers and the person's changes (`git status`, no driver run). Read
 * once, while the bundle is checked: nothing of it depends on the bundle.
 */
export async function readWorktree(cwd: string): Promise<WorktreeFacts> {
  const drivers = await filterDrivers(cwd);
  const r = await hostGit(['status', '--porcelain=v1', '-z', '--untracked-files=no', '--no-renames'], {
    cwd,
    drivers,
  });
  if (r.code !== 0) throw refuse('git', `could not read the worktree's state: ${clip(r.stderr)}`);
  const changed = r.stdout
    .split('\0')
    .map((entry) => entry.slice(3))
    .filter((p) => p !== '');
  return { drivers, changed };
}

/** The first changed path of the person's that the tip touches, or null. */
function localChange(changed: readonly string[], ch: TreeChanges): string | null {
  const touched = new Set([...ch.added, ...ch.present]);
  return changed.find((p) => touched.has(p)) ?? null;
}

/** What a fast-forward was checked against, for the move and for putting it back. */
export interface FastForwardPlan {
  base: string;
  tip: string;
  ch: TreeChanges;
  /** The paths it creates from nothing (the topmost of each). */
  fresh: string[];
  drivers: readonly string[];
}

/** Takes back what a fast-forward wrote: the branch, the index, the new paths, the replaced ones. */
async function putBack(cwd: string, ref: string, o: FastForwardPlan) {
  const { drivers } = o;
  if ((await revParse(cwd, ref).catch(() => null)) === o.tip) {
    await hostGitOk(['update-ref', '-m', 'chalk: put back', ref, o.base, o.tip], { cwd });
  }
  await hostGitOk(['read-tree', '-m', o.base], { cwd, drivers });
  // Everything under a path that did not exist before is git's; `rm` walks a tree as deep as
  // git could make it (node's recursive rm runs out of stack on a few thousand levels).
  for (let i = 0; i < o.fresh.length; i += CHUNK) {
    await runOk('rm', ['-rf', '--', ...o.fresh.slice(i, i + CHUNK)], { cwd });
  }
  if (o.ch.present.length > 0) {
    const input = `${o.ch.present.join('\0')}\0`;
    await hostGitOk(['checkout-index', '-f', '-q', '-z', '--stdin'], { cwd, input, drivers });
  }
}

/**
 * Checks that `tip` may fast-forward the worktree `cwd` (at `base`): nothing of the person's in
 * the way, no change of theirs to a path the tip touches. The plan, or BundleImportError with
 * one line. Reads only: it may run beside other checks of the same tip.
 */
export async function checkFastForward(
  cwd: string,
  o: { base: string; tip: string; worktree: WorktreeFacts; ch: TreeChanges },
): Promise<FastForwardPlan> {
  const { ch } = o;
  const { drivers } = o.worktree;
  const { obstacle, fresh } = await obstacles(cwd, ch);
  const dirty = localChange(o.worktree.changed, ch);
  if (obstacle) throw refuse('worktree', `the sandbox's work was not taken: ${obstacle} in ${cwd}`);
  if (dirty) {
    throw refuse('worktree', `${show(dirty)} has changes in ${cwd} that the sandbox's work would overwrite`);
  }
  return { base: o.base, tip: o.tip, ch, fresh, drivers };
}

/**
 * Fast-forwards the branch `ref`, checked out in `cwd` at the plan's base, to its tip (`git merge
 * --ff-only`, no filter driver), or refuses with one line; on any failure after git started
 * writing, the branch, the index and the worktree are put back first.
 */
export async function fastForward(cwd: string, ref: string, plan: FastForwardPlan): Promise<void> {
  const { tip, drivers } = plan;
  const r = await hostGit(['merge', '--ff-only', '--quiet', '--no-stat', tip], { cwd, drivers });
  const now = await revParse(cwd, 'HEAD').catch(() => null);
  if (r.code === 0 && now === tip) return;
  const why =
    r.code !== 0
      ? `the fast-forward to ${short(tip)} failed: ${clip(r.stderr) || `exit ${r.code}`}`
      : `${ref.replace(/^refs\/heads\//, '')} is at ${short(now ?? 'nothing')} after the fast-forward`;
  try {
    await putBack(cwd, ref, plan);
  } catch (err) {
    throw refuse(
      'git',
      `${why}; putting the worktree back failed too: ${clip(err instanceof Error ? err.message : String(err))}`,
    );
  }
  throw refuse(r.code !== 0 ? 'git' : 'head-moved', `${why}; the branch and the worktree were put back`);
}
