/**
 * Host git as the run, the setup and the store use it: the few operations
 * they need on the user's repository. The default implementation is
 * core/git (every call with hooks off, bundles checked before anything is
 * fetched); the kernel binds it, and a test may bind its own.
 */

/** Why a bundle was refused. */
export type BundleRejection =
  | 'missing'
  | 'not-a-file'
  | 'too-large'
  | 'unverified'
  | 'heads'
  | 'not-a-commit'
  | 'over-cap'
  | 'not-descendant'
  | 'head-moved'
  | 'bad-target'
  | 'inspected'
  | 'worktree'
  | 'git';

/** A refused bundle: one readable line; nothing was changed in the repository or the worktree. */
export class BundleImportError extends Error {
  override name = 'BundleImportError';
  constructor(
    readonly reason: BundleRejection,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Where the bundle's commits go: fast-forward the checked-out `branch` (which
 * must still be at `base`), or a new branch `detention/...` that must not exist.
 */
export type BundleTarget = { kind: 'fast-forward'; branch: string } | { kind: 'branch'; name: string };

export interface ImportBundleOptions {
  /** The worktree (the ticket branch is checked out here). */
  cwd: string;
  /** The bundle's host path (in a host directory the sandbox cannot reach). */
  bundle: string;
  /**
   * The bundle is written once this resolves: what does not depend on it (the target, the base,
   * the worktree, the quarantine) is read meanwhile. When it rejects, nothing is imported and
   * importBundle rejects with its error.
   */
  ready?: Promise<unknown>;
  /** The commit the sandbox started from: the bundle's tip must descend from it. */
  base: string;
  target: BundleTarget;
  /** Default BUNDLE_MAX_BYTES (512 MiB). */
  maxBytes?: number;
  /** The bundle's one head must have this name (default `HEAD`, what the sandbox's export writes). */
  head?: string;
  /** What the bundle may bring (default DEFAULT_HOME_LIMITS): checked in the quarantine, before any ref moves. */
  limits?: HomeLimits;
  /** Files of the tip read while it is checked (as git stores them: mode and text; '' for a submodule; null when absent or a directory), for `inspect`. */
  read?: readonly string[];
  /**
   * Looks at the tip (its objects in the user's store, no ref moved to it yet) with host git
   * before any ref moves; a returned line refuses the import (`inspected`; the loop's guard uses
   * this). `changed`: every path the tip changes against `base` (both sides of a rename), as read
   * for a fast-forward; null for a detention branch. `files`: the tip's files `read` names, in order.
   */
  inspect?: (
    tip: string,
    changed: readonly string[] | null,
    files: readonly ({ mode: string; text: string } | null)[],
  ) => Promise<string | null>;
}

/**
 * The caps on what a bundle brings home, each set by a machine-only key (a repository cannot
 * raise them): read from the incoming tree's object metadata in the quarantine, never by
 * checking anything out. They hold for a fast-forward and for a detention branch alike.
 */
export interface HomeLimits {
  /** Files (blobs, symlinks, submodule entries) in the tip's tree: CHALK_HOME_MAX_FILES. */
  maxFiles: number;
  /** MiB of the tip's tree once checked out (every entry's size, shared blobs counted each time): CHALK_HOME_MAX_MB. */
  maxMiB: number;
  /** Bytes of any one path in the tip's tree: CHALK_HOME_MAX_PATH (a 3,000-deep path is 6,000). */
  maxPathBytes: number;
  /** Objects in the bundle's pack (commits, trees, blobs, tags): CHALK_HOME_MAX_OBJECTS. */
  maxObjects: number;
}

/** The key that sets each cap, for the line that names it. */
export const HOME_LIMIT_KEYS: Readonly<Record<keyof HomeLimits, string>> = {
  maxFiles: 'CHALK_HOME_MAX_FILES',
  maxMiB: 'CHALK_HOME_MAX_MB',
  maxPathBytes: 'CHALK_HOME_MAX_PATH',
  maxObjects: 'CHALK_HOME_MAX_OBJECTS',
};

/** The defaults: far above what a real project's tree has (Chromium's has under 500,000 files). */
export const DEFAULT_HOME_LIMITS: Readonly<HomeLimits> = {
  maxFiles: 500_000,
  maxMiB: 4096,
  maxPathBytes: 1024,
  maxObjects: 2_000_000,
};

/** The longest name one path component may have: what Linux and macOS file systems hold (NAME_MAX). */
export const MAX_NAME_BYTES = 255;

export interface ImportedBundle {
  /** The bundle's tip: the new HEAD, or the new branch's tip. */
  tip: string;
  /** The ref that now points at `tip` (`refs/heads/...`). */
  ref: string;
}

export interface CreatedBundle {
  /** The bundle's path (`out`). */
  out: string;
  /** The commit the bundle's one head points at. */
  head: string;
  /** The head's ref name in the bundle (`refs/heads/chalk/T-1`). */
  ref: string;
  /** The boundary commits of a shallow history, which the receiver marks shallow; [] for a full history. */
  shallow: string[];
}

/** What a command printed and how it exited (a push: the caller shows what the remote said). */
export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

export interface HostGit {
  /** `git rev-parse --verify REV`: the object id; throws when it names nothing. */
  revParse(cwd: string, rev: string): Promise<string>;
  /** `git config --get KEY`, or null when unset. */
  configGet(cwd: string, key: string): Promise<string | null>;
  /** The configuration files git includes for `cwd` (`include.path`, `includeIf.*.path`), absolute. */
  includedConfigFiles(cwd: string): Promise<string[]>;
  /** `git status --porcelain` lines (empty when clean), or null when git could not read the worktree. */
  statusPorcelain(cwd: string): Promise<string[] | null>;
  /** The checked-out branch's short name, or null on a detached HEAD. */
  currentBranchName(cwd: string): Promise<string | null>;
  /** The repository's git common dir, absolute (the same from every linked worktree). */
  commonDir(cwd: string): Promise<string>;
  /** Short names of the refs under the given prefixes (`refs/heads/detention/`). */
  forEachRef(cwd: string, prefixes: readonly string[]): Promise<string[]>;
  /** Creates branch `name` at commit `at`; fails if the branch exists. */
  createBranch(cwd: string, o: { name: string; at: string }): Promise<void>;
  /** `git push -u REMOTE BRANCH` with no hook: the result, whatever the exit. */
  push(cwd: string, o: { remote: string; branch: string; setUpstream?: boolean }): Promise<GitOutput>;
  /** Their best common ancestor, or null when they have none (or one is unknown). */
  mergeBase(cwd: string, o: { a: string; b: string }): Promise<string | null>;
  /** Every path that differs between two commits (both sides of a rename). */
  changedPaths(cwd: string, o: { from: string; to: string }): Promise<string[]>;
  /** Every file of a commit's tree, at any depth, as git stores it: mode, object id, path; its contents never read. */
  treeEntries(cwd: string, rev: string): Promise<TreeEntry[]>;
  /** A file of a commit as git stores it (mode and text); null when absent. */
  fileAt(cwd: string, o: { rev: string; path: string }): Promise<{ mode: string; text: string } | null>;
  /**
   * A bundle of `ref`'s full history at `out`, which must not exist yet; with `since`, a thin one
   * (what `ref` has beyond `since`'s history), refused unless `ref`'s tip descends from `since`.
   */
  createBundle(o: {
    cwd: string;
    ref: string;
    out: string;
    depth?: number;
    keep?: string | null;
    since?: string;
  }): Promise<CreatedBundle>;
  /**
   * A new bare repository at `dir` holding `commit`'s history and nothing else of the repository
   * at `cwd` (no other ref, no config, no hook), world-readable: what a sandbox mirror is made of.
   * Throws in a shallow repository.
   */
  mirrorRepo(o: { cwd: string; commit: string; dir: string }): Promise<void>;
  /** The git common dir (absolute) and whether the history is shallow (stops at a boundary, as a CI checkout's). */
  repoLayout(cwd: string): Promise<{ commonDir: string; shallow: boolean }>;
  /** Bytes on disk of the objects `to` has beyond `from`'s history. */
  historyBytes(cwd: string, o: { from: string; to: string }): Promise<number>;
  /** Takes a sandbox's bundle in, checked (BundleImportError when refused; no ref moved then). */
  importBundle(o: ImportBundleOptions): Promise<ImportedBundle>;
  /** Whether the full ref (`refs/heads/x`) exists. */
  refExists(cwd: string, ref: string): Promise<boolean>;
  /** The commit `rev` names, or null when it names none. */
  resolveCommit(cwd: string, rev: string): Promise<string | null>;
  /** `git branch -d` (merged only) or `-D`: whether the branch was deleted. */
  deleteBranch(cwd: string, o: { name: string; force: boolean }): Promise<boolean>;
  /** `git worktree add -b BRANCH PATH BASE`; throws with git's line. */
  worktreeAdd(cwd: string, o: { path: string; branch: string; base: string }): Promise<void>;
  /** `git worktree remove [--force] PATH`: whether it was removed. */
  worktreeRemove(cwd: string, o: { path: string; force: boolean }): Promise<boolean>;
  worktreePrune(cwd: string): Promise<void>;
  /** The newest `max` commits reachable from `rev` (sha and subject), newest first: office hours finds the detention commit. */
  recentCommits(cwd: string, o: { rev: string; max: number }): Promise<{ sha: string; subject: string }[]>;
  /** `git diff --stat FROM TO` and the first `maxLines` lines of the diff, with its full line count. */
  diffSummary(cwd: string, o: { from: string; to: string; maxLines: number }): Promise<DiffSummary>;
  /** `git switch -c NAME` at HEAD (office hours' `tutoring/...` branch); throws with git's line. */
  switchNewBranch(cwd: string, name: string): Promise<void>;
  /**
   * Office hours' grading files: `paths` put back as commit `from` has them (removed when it has
   * none) and committed alone with `message`; the new commit, or null when nothing changed.
   */
  commitRestored(cwd: string, o: { from: string; paths: readonly string[]; message: string }): Promise<string | null>;
  /** Whether `ancestor` is `descendant` or one of its ancestors (`chalk cleanup`: merged). */
  isAncestor(cwd: string, o: { ancestor: string; descendant: string }): Promise<boolean>;
  /** Remote-tracking refs whose history holds `rev` (`chalk cleanup`: pushed). */
  remotesContaining(cwd: string, rev: string): Promise<string[]>;
}

/** One file of a commit's tree (`git ls-tree -r`): `100644`, `100755`, `120000` (a symlink) or `160000` (a submodule). */
export interface TreeEntry {
  mode: string;
  /** The blob's (or the submodule commit's) id: a hash of the content. */
  oid: string;
  path: string;
}

/** What changed between two commits, as office hours shows it to the distiller. */
export interface DiffSummary {
  stat: string;
  /** The first lines of the diff. */
  diff: string;
  /** How many lines the whole diff has. */
  lines: number;
}
