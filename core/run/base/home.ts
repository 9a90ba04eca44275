import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Config } from '../../config/config.js';
import { BundleImportError, type BundleTarget, type HomeLimits, type HostGit } from '../../ports/host-git.js';
import { type CommitRequest, SandboxFileError, type SandboxSession } from '../../ports/sandbox.js';
import type { RunContext } from './context.js';
import { type GuardVerdict, guardLoop } from './guard.js';

/** How a sandbox's commits fared on their way home. */
export type Homecoming =
  /** `spec`: the spec's text in the tip as git stores it (what the guard judged; what the host counts). */
  | { kind: 'home'; head: string; spec: string | null }
  | { kind: 'nothing' }
  /** The guard refused what the loop changed: nothing moved. */
  | { kind: 'guarded'; verdict: Extract<GuardVerdict, { ok: false }> }
  /**
   * The bundle itself was refused (not a regular file, over a cap, unverified, not a commit, not on
   * top of base, in the way of the person's files): nothing moved, the worktree is as it was.
   */
  | { kind: 'refused'; reason: string };

/** The caps on what comes home, from the machine-only keys (a repository's `.chalk/config` cannot set them). */
export function homeLimits(config: Config): HomeLimits {
  return {
    maxFiles: config.num('CHALK_HOME_MAX_FILES'),
    maxMiB: config.num('CHALK_HOME_MAX_MB'),
    maxPathBytes: config.num('CHALK_HOME_MAX_PATH'),
    maxObjects: config.num('CHALK_HOME_MAX_OBJECTS'),
  };
}

/**
 * The ticket's spec as git stores it at `rev` (a regular file's text; '' otherwise): what the
 * guard judges and the agent reads. The worktree's copy is git's checkout of it, which a
 * `.gitattributes` conversion the sandbox committed (`working-tree-encoding`, a filter) can
 * make read otherwise, so the host counts checkpoints on this.
 */
export async function committedSpec(
  git: HostGit,
  ctx: Pick<RunContext, 'root' | 'spec'>,
  rev = 'HEAD',
): Promise<string> {
  const f = await git.fileAt(ctx.root, { rev, path: ctx.spec });
  return f && f.mode === '100644' ? f.text : '';
}

/**
 * `path` (absolute, or relative to `root`) as a path inside `root`, or null when it is outside.
 * An absolute `core.hooksPath` into the tree is inside it (joining it to the root named a
 * directory that does not exist, and the real one went unguarded).
 */
export function inside(root: string, path: string): string | null {
  const rel = relative(root, resolve(root, path));
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? null : rel;
}

/** The user's `core.hooksPath` when it points inside the repository, as a repository-relative path. */
async function hooksDirsOf(git: HostGit, root: string): Promise<string[]> {
  const set = await git.configGet(root, 'core.hooksPath');
  const rel = set ? inside(root, set) : null;
  return rel === null ? [] : [rel];
}

/** The hooks directories and the included configuration files inside the worktree (the guard keeps the agent from both). */
function configuredIn(git: HostGit, root: string): Promise<[string[], string[]]> {
  return Promise.all([hooksDirsOf(git, root), configFilesOf(git, root)]);
}

/** The git configuration files the user's configuration includes from inside the worktree. */
async function configFilesOf(git: HostGit, root: string): Promise<string[]> {
  const files = await git.includedConfigFiles(root);
  return files.map((f) => inside(root, f)).filter((f): f is string => f !== null);
}

/** What the guard is judged on: the span, the configured textbook, every forge's guarded paths (RunDeps.guardedPaths). */
export interface JudgeOptions {
  base: string;
  tip: string;
  textbook: string;
  forgeGuarded: readonly string[];
  /** The paths the tip changes, when the caller has them already. */
  changed?: readonly string[] | null;
  /** The spec at `base` (HostGit.fileAt), when the caller has it already. */
  specAtBase?: Promise<{ mode: string; text: string } | null>;
  /** The spec at `tip`, when the caller has it already (read while the tip was checked). */
  specAtTip?: { mode: string; text: string } | null;
  /** The hooks directories and included configuration files inside the worktree, when under way already. */
  configured?: Promise<[string[], string[]]>;
}

/**
 * The guard, judged by host git on what the bundle would bring: every path
 * the tip changes against `base`, and the spec as the tip has it (a regular
 * file or not). The sandbox's own account of its work is never asked.
 * Office hours judges the parked attempt the same way.
 */
export async function judge(ctx: RunContext, git: HostGit, o: JudgeOptions): Promise<GuardVerdict> {
  return (await judged(ctx, git, o)).verdict;
}

/** The guard's verdict, and the spec's text in the tip it judged (null when not a regular file). */
async function judged(
  ctx: RunContext,
  git: HostGit,
  o: JudgeOptions,
): Promise<{ verdict: GuardVerdict; spec: string | null }> {
  const { base, tip } = o;
  const [changed, before, after, [hooksDirs, configFiles]] = await Promise.all([
    o.changed ?? git.changedPaths(ctx.root, { from: base, to: tip }),
    o.specAtBase ?? git.fileAt(ctx.root, { rev: base, path: ctx.spec }),
    o.specAtTip !== undefined ? o.specAtTip : git.fileAt(ctx.root, { rev: tip, path: ctx.spec }),
    o.configured ?? configuredIn(git, ctx.root),
  ]);
  const spec = after && after.mode === '100644' ? after.text : null;
  const verdict = guardLoop({
    changed,
    ticket: ctx.ticket,
    specBefore: before?.text ?? '',
    specAfter: spec,
    hooksDirs,
    configFiles,
    // A textbook configured outside .chalk/ grades the run too.
    gradedBy: o.textbook !== '' && !o.textbook.startsWith('.chalk/') ? [o.textbook] : [],
    forgeGuarded: o.forgeGuarded,
  });
  return { verdict, spec };
}

/** The sandbox had nothing since the base: no bundle to import. */
const NOTHING = new Error('nothing to bring home');

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
  o: {
    base: string;
    target: BundleTarget;
    limits: HomeLimits;
    textbook?: string;
    forgeGuarded: readonly string[];
    /** The spec at `base`, when the caller has it already (the run's CommittedSpecs). */
    specAtBase?: Promise<{ mode: string; text: string } | null>;
    /** The sandbox's commit of what comes home, made in the export's call (host git reads meanwhile). */
    commit?: CommitRequest;
  },
): Promise<Homecoming> {
  const dest = join(ctx.paths.io, 'out.bundle');
  // The sandbox commits (`o.commit`) and exports, in one request, while host git reads what does
  // not need the bundle; the request goes first, as each host git process started from here holds
  // this thread.
  const exported = session.exportBundle(o.base, dest, o.commit ? { commit: o.commit } : {});
  // What the guard needs of the worktree's configuration, read while the sandbox exports.
  const configured = configuredIn(git, ctx.root);
  configured.catch(() => undefined);
  const ready = exported.then((head) => {
    if (head === null) throw NOTHING;
  });
  let refused: GuardVerdict | null = null;
  let spec: string | null = null;
  try {
    const r = await git.importBundle({
      cwd: ctx.root,
      bundle: dest,
      ready,
      base: o.base,
      target: o.target,
      limits: o.limits,
      read: [ctx.spec],
      inspect:
        o.target.kind === 'fast-forward'
          ? async (tip, changed, files) => {
              const j = await judged(ctx, git, {
                base: o.base,
                tip,
                textbook: o.textbook ?? '',
                forgeGuarded: o.forgeGuarded,
                changed,
                ...(o.specAtBase ? { specAtBase: o.specAtBase } : {}),
                // A HostGit that read nothing for `read` leaves the guard to read the tip itself.
                ...(files.length > 0 ? { specAtTip: files[0] ?? null } : {}),
                configured,
              });
              spec = j.spec;
              if (j.verdict.ok) return null;
              refused = j.verdict;
              return j.verdict.reason;
            }
          : undefined,
    });
    return { kind: 'home', head: r.tip, spec };
  } catch (err) {
    // Nothing of the sandbox's is left in flight when the homecoming ends, however it ended.
    await exported.catch(() => undefined);
    if (err === NOTHING) return { kind: 'nothing' };
    if (err instanceof SandboxFileError) return { kind: 'refused', reason: err.message };
    if (!(err instanceof BundleImportError)) throw err;
    const v = refused as GuardVerdict | null;
    if (err.reason === 'inspected' && v && !v.ok) return { kind: 'guarded', verdict: v };
    return { kind: 'refused', reason: err.message };
  }
}
