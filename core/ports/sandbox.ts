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
  /**
   * This command is the agent CLI: only it gets the agent credentials (and the
   * telemetry settings), in its own environment. The setup and rubric commands never do.
   */
  agent?: boolean;
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
  /** Commit identity inside the sandbox (the caller reads the host's git identity). */
  author: { name: string; email: string };
  /** Extra, non-secret environment for the container (e.g. from `beforeSandboxStart` taps). */
  env?: Record<string, string>;
  /** A distinct container for a second sandbox of the same ticket (e.g. `distill`). */
  suffix?: string;
}

/** Where things are inside a sandbox. Nothing in a sandbox is a host directory. */
export const SANDBOX_PATHS = {
  /** The clone of the ticket branch (on the RAM disk). */
  repo: '/work/repo',
  /** Files the host puts in (the system prompt): owned by root, not writable by the agent. */
  io: '/chalk',
  /** Where the shipped export script writes the bundle of new commits, for the host to read back. */
  outBundle: '/tmp/.chalk-out/out.bundle',
} as const;

/** The largest bundle the host takes from a sandbox (every sandbox and the import agree). */
export const BUNDLE_MAX_BYTES = 512 * 1024 * 1024;

/** Names the host may put into `/chalk` (`SandboxSession.putFile`). */
export const PUT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A file read back from a sandbox was not a regular file under its cap. */
export class SandboxFileError extends Error {
  override name = 'SandboxFileError';
}

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
  /** Commits everything in the tree (tracked and untracked, not ignored); returns the new HEAD, or null when there was nothing to commit. */
  commitAll(message: string, opts?: { allowEmpty?: boolean }): Promise<string | null>;
  /**
   * Writes the commits in `base..HEAD` as a git bundle, copies it out through
   * the engine (a regular file under the bundle cap, else SandboxFileError) to
   * `dest`, a new file in a host directory the sandbox cannot reach, and
   * returns the sandbox's HEAD; null when HEAD is `base`. The host verifies
   * the bundle before it fetches anything from it.
   */
  exportBundle(base: string, dest: string): Promise<string | null>;
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
   * Ends every process left in the sandbox (the agent's background jobs), so
   * nothing the agent started runs beside the rubric or the review.
   */
  reapStrays(): Promise<void>;
  /** Discards uncommitted changes and untracked, non-ignored files. */
  reset(): Promise<void>;
  /** The tree id of everything in the working tree (tracked and untracked, not ignored), minus `exclude` pathspecs; null when git fails. */
  treeId(exclude?: string[]): Promise<string | null>;
  /** Stops and removes the container; safe to call more than once. */
  stop(): Promise<void>;
}

export interface Sandbox {
  /** The image sandboxes start from, when they start from one (what `beforeSandboxStart` taps are told). */
  readonly image?: string;
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
