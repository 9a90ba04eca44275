/**
 * A disposable place where an agent works: a private clone of the ticket branch
 * on a RAM disk, which hands back only git commits. One session per run.
 */
export interface ExecOptions {
  /** Kill the command (and everything it started) after this long; `timedOut` says so. */
  timeoutMs?: number;
  /** Extra environment for this command only (never secrets: those are set when the session opens). */
  env?: Record<string, string>;
  /** Working directory inside the sandbox; default the clone (`/work/repo`). */
  cwd?: string;
  /** Written to the command's stdin, which is then closed. */
  stdin?: string;
  /**
   * Called with every chunk of output as it arrives: the bytes the command wrote, not decoded
   * (a character may be split between two chunks of one stream).
   */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  /** Aborting kills the command; `exec` then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * This command is the agent CLI: only it gets the agent credentials (and the
   * telemetry settings), in its own environment. The setup and rubric commands
   * never do. It starts only once every process left in the sandbox has ended
   * (`reapStrays`), so none is there to read that environment, and only it can
   * write the output the host reads back as the call's result.
   */
  agent?: boolean;
  /**
   * With `agent`: the call's spend cap in US dollars, held where the sandbox meters the model
   * (its gateway refuses the model once the call has spent it), beside the CLI's own cap.
   */
  budgetUsd?: number;
  /**
   * Most bytes of output (stdout and stderr together) the host takes from the
   * command; past it the command is stopped and `outputCapped` is set.
   * Default: the sandbox's output cap (`CHALK_OUTPUT_CAP_MB`).
   */
  maxOutputBytes?: number;
}

export interface ExecResult {
  exitCode: number;
  /** What the host kept of stdout: its head and tail when it was longer (see `KEPT_OUTPUT_BYTES`). */
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The command printed more than its output cap and was stopped. */
  outputCapped?: boolean;
  /**
   * The sandbox itself ended the command, said in the sandbox's words for the
   * person (e.g. `the sandbox ran out of memory (CHALK_SANDBOX_MEM_MB=2048)`); absent otherwise.
   */
  killedBy?: string;
  /**
   * What an agent command's model calls used, counted from the model's responses by the
   * sandbox's gateway, outside the sandbox's reach: where present, the spend to record and hold
   * against the budgets, whatever the command printed.
   */
  metered?: MeteredUsage;
}

/** Tokens and cost of one agent command, as the sandbox's model gateway counted them. */
export interface MeteredUsage {
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  /** The model that cost the most ('' when no request was answered). */
  model: string;
  requests: number;
  /** Responses whose usage could not be read. */
  unmetered: number;
  /** Models the gateway's price table does not know (priced as the dearest). */
  unpriced: string[];
  /** Requests the gateway refused because the call's cap was spent. */
  refusedOverCap: number;
}

/** One destination a sandbox was refused, counted, with the reason the sandbox was given. */
export interface EgressRefusal {
  host: string;
  port: number;
  /**
   * `policy` (not allowed) and `private` (a refused address range) are the person's to allow;
   * `loopback`, `sni`, `protocol`, `dns` and `gateway` never are.
   */
  kind: string;
  reason: string;
  count: number;
  /** Unix seconds. */
  first: number;
  last: number;
}

/** A sandbox's way out, where the provider controls it. */
export interface SandboxEgress {
  /** What the sandbox may reach, for the run's log (one line). */
  readonly summary: string;
  /** The refusals since the last call (at most a cap of distinct ones, the rest counted in `dropped`). */
  refusals(): Promise<{ entries: EgressRefusal[]; dropped: number }>;
}

/** Of a long output, the host keeps this many bytes in memory (the head, and the last quarter as the tail). */
export const KEPT_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface SandboxSpec {
  /** `<repo>`: the main checkout's name, used in the container name and labels. */
  repo: string;
  /**
   * A git bundle on the host holding the ticket branch's history: the only
   * repository data the sandbox gets (never the user's git dir, its config,
   * hooks or worktree paths). It is streamed in through the engine's API.
   */
  source: string;
  ticket: string;
  runId: string;
  /** The ticket branch, cloned into the sandbox. */
  branch: string;
  /**
   * The base branch as the clone shows it, `origin/<name>`, at the commit
   * where the ticket branch left it (what the review diffs against).
   */
  baseBranch?: { name: string; commit: string };
  /**
   * The boundary commits of a shallow history in `source` (a shallow host
   * repository, or `CHALK_CLONE_DEPTH`): the clone marks them shallow, since
   * the bundle holds none of their parents. Absent or [] for a full history.
   */
  shallow?: string[];
  /**
   * The sandbox starts from this repository's mirror of `base` (`Sandbox.makeMirror`), whose
   * objects it borrows; `source` is then thin: what the ticket branch has beyond `base`, which
   * the host checked is one of its ancestors. Absent: `source` holds the whole history.
   */
  mirror?: { repo: MirrorRepo; base: string };
  /** Commit identity inside the sandbox (the caller reads the host's git identity). */
  author: { name: string; email: string };
  /** Extra, non-secret environment for the container (e.g. from `beforeSandboxStart` taps). */
  env?: Record<string, string>;
  /** A distinct container for a second sandbox of the same ticket (e.g. `distill`). */
  suffix?: string;
}

/**
 * Which repository a sandbox mirror is of: `key` is the SHA-256 of its main checkout's real
 * path (what mirrors are found by: one made from a repository is never another's), `root` that
 * path (so `chalk cleanup` can tell one whose checkout is gone).
 */
export interface MirrorRepo {
  key: string;
  root: string;
}

/** Where things are inside a sandbox. Nothing in a sandbox is a host directory. */
export const SANDBOX_PATHS = {
  /** The clone of the ticket branch (on the RAM disk). */
  repo: '/work/repo',
  /** Files the host puts in (the system prompt): owned by root, not writable by the agent. */
  io: '/chalk',
  /** Where the shipped export script writes the bundle of new commits, for the host to read back. */
  outBundle: '/tmp/.chalk-out/out.bundle',
  /** A sandbox mirror's repository (`SandboxSpec.mirror`): in the image, root's, read-only. */
  mirror: '/opt/chalk-mirror.git',
} as const;

/** The largest bundle the host takes from a sandbox (every sandbox and the import agree). */
export const BUNDLE_MAX_BYTES = 512 * 1024 * 1024;

/** Names the host may put into `/chalk` (`SandboxSession.putFile`). */
export const PUT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A file read back from a sandbox was not a regular file under its cap. */
export class SandboxFileError extends Error {
  override name = 'SandboxFileError';
}

export interface CommitOptions {
  allowEmpty?: boolean;
  /** Commit exactly this tree (an object id), not the working tree. */
  tree?: string;
  /** The commit's parent with `tree` (an object id); default HEAD. */
  parent?: string;
}

export interface GraftOptions {
  onto: string;
  from: string;
  to: string;
  exclude?: readonly string[];
  /** Paths a harness run added elsewhere (the base's rubric, from the host's cache): never taken when `to` adds them. */
  made?: readonly string[];
  harness?: readonly (readonly [string, string])[];
}

/** An object id as git prints it (SHA-1 or SHA-256). */
export const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** What a sandbox script printed as a tree id, when it is one (trimmed); null otherwise. */
export const treeIdIn = (text: string): string | null => (OBJECT_ID.test(text.trim()) ? text.trim() : null);

/**
 * `SandboxSession.treeIds` over a sandbox's way of running tree-id.sh (`script`: its env in,
 * its stdout out, throwing when it fails): both ids from the one call, null where git failed.
 */
export async function treeIdsBy(
  script: (env: Record<string, string>) => Promise<string>,
  o: { exclude: string[]; unlessIgnored: string[] },
): Promise<TreeIds> {
  try {
    const out = await script({ EXCLUDE: o.exclude.join('\n'), UNLESS_IGNORED: o.unlessIgnored.join('\n'), WHOLE: '1' });
    const [without = '', whole = ''] = out.split('\n');
    return { whole: treeIdIn(whole), without: treeIdIn(without) };
  } catch {
    return { whole: null, without: null };
  }
}

/** The environment of the shipped graft script: object ids checked, never spliced into a command. */
export function graftEnv(o: GraftOptions): Record<string, string> {
  const ids = [o.onto, o.from, o.to, ...(o.harness ?? []).flat()];
  for (const id of ids) if (!OBJECT_ID.test(id)) throw new Error(`not an object id: ${JSON.stringify(id)}`);
  return {
    ONTO: o.onto,
    FROM: o.from,
    TO: o.to,
    EXCLUDE: (o.exclude ?? []).join('\n'),
    MADE: (o.made ?? []).join('\n'),
    HARNESS: (o.harness ?? []).map(([a, b]) => `${a} ${b}`).join('\n'),
  };
}

/** A commit `SandboxSession.exportBundle` makes first, in the same call (as `commitAll(message, opts)`). */
export interface CommitRequest extends CommitOptions {
  message: string;
}

/** What exportBundle's script exits with when its commit failed (commit.sh's stderr says why). */
export const COMMIT_FAILED_EXIT = 90;

/**
 * The text of one script that runs commit.sh and then export.sh (their texts, as shipped),
 * for `exportBundle` with a commit: one request instead of two. commit.sh runs in a subshell,
 * so its exits end only it (with `set -e` in force); its output (the new HEAD) is not export.sh's, which prints HEAD.
 */
export function commitThenExport(commitText: string, exportText: string): string {
  // Not `if ! ( ... )`: bash ignores `set -e` in a command whose status is tested, subshell included.
  return `(\n${commitText}\n) >/dev/null\n[ "$?" = 0 ] || exit ${COMMIT_FAILED_EXIT}\n${exportText}`;
}

/** The environment of the shipped commit script for these options (object ids checked). */
export function commitEnv(message: string, o: CommitOptions = {}): Record<string, string> {
  for (const id of [o.tree, o.parent]) {
    if (id !== undefined && !OBJECT_ID.test(id)) throw new Error(`not an object id: ${JSON.stringify(id)}`);
  }
  return { MESSAGE: message, ALLOW_EMPTY: o.allowEmpty ? '1' : '', TREE: o.tree ?? '', PARENT: o.parent ?? '' };
}

/** What `SandboxSession.saveState` keeps of a sandbox after its setup command. */
export interface StateSaveOptions {
  /**
   * Names of the dependency directories to keep wherever the setup made them in the clone
   * (untracked, at any depth, not inside another: `node_modules`, `.venv`, `target`, ...).
   * The home directory is kept whole, but the git identity the clone wrote.
   */
  dirs: readonly string[];
  /** Most bytes the host takes; past them the save is stopped and nothing is kept. */
  maxBytes: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The two tree ids `SandboxSession.treeIds` gives. */
export interface TreeIds {
  /** The whole working tree (tracked and untracked, not ignored). */
  whole: string | null;
  /** The same without the paths left out. */
  without: string | null;
}

/** A saved state: its size on the host, or why nothing was kept (one line). */
export type SavedState = { saved: true; bytes: number } | { saved: false; why: string };

export interface SandboxSession {
  /** The sandbox's name as its provider forms it (Docker: `chalk-sandbox-<repo>-<TICKET>`), for the log. */
  readonly name: string;
  readonly spec: SandboxSpec;
  /** Runs `command` with bash in the sandbox (default cwd: the clone). */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Clones the ticket branch into `/work/repo`; returns its HEAD. */
  clone(): Promise<string>;
  /** The clone's HEAD commit. */
  head(): Promise<string>;
  /**
   * Commits everything in the tree (tracked and untracked, not ignored) on top of HEAD; with `tree`,
   * exactly that tree on top of `parent` (default HEAD), whatever the working tree holds. The index
   * is then HEAD's. Returns the new HEAD, or null when there was nothing to commit.
   */
  commitAll(message: string, opts?: CommitOptions): Promise<string | null>;
  /**
   * A tree made without touching the working tree or the index: `onto` with every path that changed
   * from `from` to `to` taking `to`'s entry (or gone). Left out: the literal paths in `exclude`, and
   * paths `to` adds that a harness run also added (`made`, or `harness`: the trees before and after it).
   * Throws when git fails.
   */
  graftTree(o: GraftOptions): Promise<string>;
  /**
   * Puts the working tree (tracked and untracked, not ignored files) back as `tree` has it; the
   * index is untouched. Resolves to the id of the working tree it found (`tree` itself when
   * nothing differed), or null when git could not say: one call tells what a harness run
   * changed and puts it back.
   */
  restoreTree(tree: string): Promise<string | null>;
  /**
   * Writes the commits in `base..HEAD` as a git bundle, copies it out through
   * the engine (a regular file under the bundle cap, else SandboxFileError) to
   * `dest`, a new file in a host directory the sandbox cannot reach, and
   * returns the sandbox's HEAD; null when HEAD is `base`. The host verifies
   * the bundle before it fetches anything from it. With `commit`, it first
   * commits as `commitAll` does, in the same call (a failed commit throws as
   * `commitAll`'s would, and nothing is exported).
   */
  exportBundle(base: string, dest: string, o?: { commit?: CommitRequest }): Promise<string | null>;
  /**
   * Puts `content` at `SANDBOX_PATHS.io/<name>`, owned by root and read-only
   * to the agent (the system prompt); replaces what was there.
   */
  putFile(name: string, content: string): Promise<void>;
  /**
   * A file of the sandbox (a path relative to the clone, or absolute): its
   * bytes when it is a regular file (no symlink, FIFO, device or directory) of
   * at most `maxBytes`; null when it does not exist; SandboxFileError otherwise.
   */
  readFile(path: string, opts: { maxBytes: number }): Promise<Buffer | null>;
  /**
   * Ends every process left in the sandbox (the agent's background jobs, what
   * the setup or the rubric left running, double-forked, stopped or ignoring
   * signals, a fork bomb), so nothing one command started runs beside the next
   * or reads what comes next. Throws when it cannot: nothing may run then.
   */
  reapStrays(): Promise<void>;
  /** Discards uncommitted changes and untracked, non-ignored files. */
  reset(): Promise<void>;
  /** The tree id of everything in the working tree (tracked and untracked, not ignored), minus `exclude` pathspecs; null when git fails. */
  treeId(exclude?: string[]): Promise<string | null>;
  /**
   * In one call, the tree id of the working tree minus `exclude` pathspecs and the
   * `unlessIgnored` paths git does not ignore (`without`), and of the whole tree
   * (`whole`, as `treeId()`); each null when git fails.
   */
  treeIds(o: { exclude: string[]; unlessIgnored: string[] }): Promise<TreeIds>;
  /** Stops and removes the container; safe to call more than once. */
  stop(): Promise<void>;
  /**
   * Streams what the setup command left (StateSaveOptions) out of the sandbox, as an
   * archive the host never unpacks, into `dest`: a new host file in a directory no
   * sandbox reaches. Past the cap, failing or timing out, nothing is left at `dest`.
   * Optional: a sandbox without it keeps no setup state, and every sandbox runs setup.
   */
  saveState?(dest: string, opts: StateSaveOptions): Promise<SavedState>;
  /**
   * Unpacks an archive `saveState` made into this sandbox (the clone's dependency
   * directories and the home directory only; files the clone has are kept). Throws on failure.
   */
  restoreState?(src: string, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<void>;
  /** Present when the provider controls the sandbox's network (Docker's egress proxy). */
  readonly egress?: SandboxEgress;
}

/** Which image a sandbox provider chose for the repository, and why; `notes` are what it did not use. */
export interface ImageReport {
  image: string;
  why: string;
  notes: string[];
}

export interface Sandbox {
  /** The image sandboxes start from, when they start from one (what `beforeSandboxStart` taps are told). */
  readonly image?: string;
  /** Once `ensureImage` is done, a provider that chooses among images says which, and why (the run's first lines show it). */
  readonly imageReport?: ImageReport;
  /**
   * The image's own id (Docker: `docker image inspect`'s `Id`), whatever name it has:
   * what a saved setup state is keyed by. Null when it cannot be known.
   */
  imageId?(): Promise<string | null>;
  /**
   * Makes sure the image exists: builds the default image (and an image the repository's
   * toolchain or dev container asks for) when missing; a missing custom image is a UserError.
   */
  ensureImage(): Promise<void>;
  /** Removes any leftover container of the same ticket, then starts a fresh one. */
  open(spec: SandboxSpec): Promise<SandboxSession>;
  /**
   * Optional: starts what a sandbox of this identity needs before its image and source are known
   * (Docker: removes the ticket's leftovers, makes its network and way out) while the caller's
   * host work goes on; `open` of the same sandbox takes it. The function returned gives it up
   * when no `open` follows.
   */
  prepare?(spec: Pick<SandboxSpec, 'repo' | 'ticket' | 'runId' | 'suffix'>): () => Promise<void>;
  /**
   * Mirrors (optional: a provider without them is given the whole history on every start).
   * A mirror is a repository's history up to one commit, held where a sandbox of the image
   * sandboxes start from now reads it and nothing in the sandbox can change it (Docker: an
   * image layer on that image, root's files on the read-only root file system).
   * `mirrors`: every mirror for the current image, newest first: the repository (`MirrorRepo.key`)
   * and the commit each holds.
   */
  mirrors?(): Promise<{ repo: string; base: string }[]>;
  /**
   * Makes the repository's mirror of `base` unless it is there (`built` false), `fill` writing
   * its bare repository (host git's `mirrorRepo`) at the path it is given; older mirrors of the
   * repository past the last two are removed.
   */
  makeMirror?(o: {
    repo: MirrorRepo;
    base: string;
    fill: (gitDir: string) => Promise<void>;
    onBuild?: (line: string) => void;
  }): Promise<{ built: boolean }>;
  /**
   * `chalk cleanup`: the repository's mirrors but the newest for the current image (`all`:
   * every one), and the mirrors of repositories whose checkout is gone; how many went.
   */
  removeMirrors?(o: { repo: MirrorRepo; all: boolean }): Promise<number>;
  /** Removes every container labelled with this repo (and ticket, when given); returns their names. */
  removeLeftovers(filter: { repo: string; ticket?: string }): Promise<string[]>;
  /** Stops and removes every session this process opened (for signal handlers). */
  closeAll(): Promise<void>;
  /**
   * Lines saying which image and limits a sandbox gets and who chose each
   * (environment, repository, default, held to this machine's ceiling), for
   * the run's first lines; a provider with nothing to say may leave it out.
   */
  describe?(): Promise<string[]>;
}

/**
 * What the engine behind a Sandbox can hold: its CPUs and memory, and the memory one
 * sandbox is given. A Sandbox that can say implements it; the fleet sizes its slots by it.
 * Null when the engine cannot be asked.
 */
export interface SandboxCapacity {
  capacity(): Promise<{ cpus: number; memoryMb: number; sandboxMemoryMb: number } | null>;
}

export function hasCapacity(x: unknown): x is SandboxCapacity {
  return typeof (x as Partial<SandboxCapacity> | null)?.capacity === 'function';
}
