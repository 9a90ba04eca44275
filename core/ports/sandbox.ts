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
  /** Called with every chunk of output as it arrives. */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
  /** Aborting kills the command; `exec` then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface SandboxSpec {
  /** `<repo>`: the main checkout's name, used in the container name and labels. */
  repo: string;
  /** The host repository's git common dir; mounted read-only, the clone borrows its objects. */
  gitDir: string;
  ticket: string;
  runId: string;
  /** The ticket branch, cloned into the sandbox. */
  branch: string;
  /** The run's io directory on the host, mounted for prompts in and answers (and the bundle) out. */
  ioDir: string;
  /** Commit identity inside the sandbox; default the host's git identity, else Chalk Agent. */
  author?: { name: string; email: string };
  /** Extra, non-secret environment for the container (e.g. from `beforeSandboxStart` taps). */
  env?: Record<string, string>;
  /** A distinct container for a second sandbox of the same ticket (e.g. `distill`). */
  suffix?: string;
}

/** Where things are inside a sandbox. */
export const SANDBOX_PATHS = {
  /** The clone of the ticket branch (on the RAM disk). */
  repo: '/work/repo',
  /** The run's io directory. */
  io: '/chalk',
  /** The host's git store, read-only. */
  gitStore: '/src.git',
} as const;

export interface SandboxSession {
  /** The container's name, `chalk-sandbox-<repo>-<TICKET>`. */
  readonly name: string;
  readonly spec: SandboxSpec;
  /** Runs `command` with bash in the sandbox (default cwd: the clone). */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Clones the ticket branch into `/work/repo`; returns its HEAD. */
  clone(): Promise<string>;
  /** The clone's HEAD commit. */
  head(): Promise<string>;
  /** Commits everything in the tree (tracked and untracked, not ignored); returns the new HEAD, or null when there was nothing to commit. */
  commitAll(message: string, opts?: { allowEmpty?: boolean }): Promise<string | null>;
  /**
   * Writes the commits in `base..HEAD` as a git bundle into the io directory and
   * returns its host path, or null when HEAD is `base`.
   */
  exportBundle(base: string): Promise<string | null>;
  /**
   * Brings the commits since `base` home: exports the bundle, fetches it into
   * the host worktree that has the ticket branch checked out and fast-forwards
   * (never merges). Returns the new HEAD, or null when there was nothing new.
   */
  bringHome(base: string, worktree: string): Promise<string | null>;
  /** Discards uncommitted changes and untracked, non-ignored files. */
  reset(): Promise<void>;
  /** The tree id of everything in the working tree (tracked and untracked, not ignored), minus `exclude` pathspecs; null when git fails. */
  treeId(exclude?: string[]): Promise<string | null>;
  /** Stops and removes the container; safe to call more than once. */
  stop(): Promise<void>;
}

export interface Sandbox {
  /**
   * Makes sure the image exists: builds the default image when missing; a
   * missing custom image is a UserError.
   */
  ensureImage(): Promise<void>;
  /** Removes any leftover container of the same ticket, then starts a fresh one. */
  open(spec: SandboxSpec): Promise<SandboxSession>;
  /** Removes every container labelled with this repo (and ticket, when given); returns their names. */
  removeLeftovers(filter: { repo: string; ticket?: string }): Promise<string[]>;
  /** Stops and removes every session this process opened (for signal handlers). */
  closeAll(): Promise<void>;
}
