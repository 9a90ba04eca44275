import { join, relative } from 'node:path';
import { BundleImportError, type BundleTarget, type HostGit } from '../ports/host-git.js';
import { SandboxFileError, type SandboxSession } from '../ports/sandbox.js';
import type { RunContext } from './context.js';
import { type GuardVerdict, guardLoop } from './guard.js';

/** How a sandbox's commits fared on their way home. */
export type Homecoming =
  | { kind: 'home'; head: string }
  | { kind: 'nothing' }
  /** The guard refused what the loop changed: nothing moved. */
  | { kind: 'guarded'; verdict: Extract<GuardVerdict, { ok: false }> }
  /** The bundle itself was refused (not a regular file, too big, unverified, not on top of base). */
  | { kind: 'refused'; reason: string };

/** The user's `core.hooksPath` when it points inside the repository, as a repository-relative path. */
async function hooksDirsOf(git: HostGit, root: string): Promise<string[]> {
  const set = await git.configGet(root, 'core.hooksPath');
  if (!set) return [];
  const rel = relative(root, join(root, set));
  return rel === '' || rel.startsWith('..') ? [] : [rel];
}

/**
 * The guard, judged by host git on what the bundle would bring: every path
 * the tip changes against `base`, and the spec as the tip has it (a regular
 * file or not). The sandbox's own account of its work is never asked.
 */
async function judge(
  ctx: RunContext,
  git: HostGit,
  o: { base: string; tip: string; textbook: string },
): Promise<GuardVerdict> {
  const { base, tip } = o;
  const [changed, before, after, hooksDirs] = await Promise.all([
    git.changedPaths(ctx.root, { from: base, to: tip }),
    git.fileAt(ctx.root, { rev: base, path: ctx.spec }),
    git.fileAt(ctx.root, { rev: tip, path: ctx.spec }),
    hooksDirsOf(git, ctx.root),
  ]);
  return guardLoop({
    changed,
    ticket: ctx.ticket,
    specBefore: before?.text ?? '',
    specAfter: after && after.mode === '100644' ? after.text : null,
    hooksDirs,
    // A textbook configured outside .chalk/ grades the run too.
    gradedBy: o.textbook !== '' && !o.textbook.startsWith('.chalk/') ? [o.textbook] : [],
  });
}

/**
 * Brings the sandbox's commits since `base` home: the bundle is copied out
 * to the run's io directory (which no sandbox reaches) and imported by host
 * git, verified, as a fast-forward of the ticket branch (only when the guard
 * allows what it changes) or as a new detention branch (the failed attempt,
 * kept for the person whatever it changed).
 */
export async function bringHome(
  ctx: RunContext,
  git: HostGit,
  session: SandboxSession,
  o: { base: string; target: BundleTarget; textbook?: string },
): Promise<Homecoming> {
  const dest = join(ctx.paths.io, 'out.bundle');
  let head: string | null;
  try {
    head = await session.exportBundle(o.base, dest);
  } catch (err) {
    if (err instanceof SandboxFileError) return { kind: 'refused', reason: err.message };
    throw err;
  }
  if (head === null) return { kind: 'nothing' };
  let refused: GuardVerdict | null = null;
  try {
    const r = await git.importBundle({
      cwd: ctx.root,
      bundle: dest,
      base: o.base,
      target: o.target,
      inspect:
        o.target.kind === 'fast-forward'
          ? async (tip) => {
              const v = await judge(ctx, git, { base: o.base, tip, textbook: o.textbook ?? '' });
              if (v.ok) return null;
              refused = v;
              return v.reason;
            }
          : undefined,
    });
    return { kind: 'home', head: r.tip };
  } catch (err) {
    if (!(err instanceof BundleImportError)) throw err;
    const v = refused as GuardVerdict | null;
    if (err.reason === 'inspected' && v && !v.ok) return { kind: 'guarded', verdict: v };
    return { kind: 'refused', reason: err.message };
  }
}
