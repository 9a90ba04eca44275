import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { keepOutBundle } from '../fs/sandbox-bundle.js';
import { readState, stateOutcome, writeState } from '../fs/sandbox-state.js';
import { SHARE_DIR } from '../paths.js';
import {
  COMMIT_FAILED_EXIT,
  type CommitOptions,
  type CommitRequest,
  commitEnv,
  commitThenExport,
  type ExecOptions,
  type ExecResult,
  type GraftOptions,
  graftEnv,
  OBJECT_ID,
  PUT_NAME,
  SANDBOX_PATHS,
  type Sandbox,
  SandboxFileError,
  type SandboxSession,
  type SandboxSpec,
  type SavedState,
  type StateSaveOptions,
  type TreeIds,
  treeIdIn,
  treeIdsBy,
} from '../ports/sandbox.js';
import { KeptOutput } from '../process/kept-output.js';

/** The sandbox's own directories, mapped under the session's root. */
const SANDBOX_DIR = /(?<![\w.~/-])(\/work|\/chalk|\/tmp|\/home\/chalk)(?=[/\s"':;)]|$)/g;

export interface TempSandboxOptions {
  /** Where session directories are made (default the OS temporary directory). */
  parent?: string;
  /** The output cap of every command (default 64 MiB, CHALK_OUTPUT_CAP_MB's default). */
  maxOutputBytes?: number;
  /** The agent's environment for `exec(..., { agent: true })` (default none). */
  agentEnv?: Record<string, string>;
}

/**
 * The Sandbox port over a temporary directory, for tests that run the loop
 * with no container engine. A session's directory stands for the sandbox's
 * file system: `/work/repo` (the clone, made with real git from the bundle),
 * `/chalk` (what the host puts in), `/tmp` and `/home/chalk`; commands run
 * with bash there, with those paths in their text mapped into it, in a clean
 * environment (PATH, HOME and the exec's own entries; no host secret). It uses
 * the Docker sandbox's own scripts (share/sandbox/scripts) for clone, commit,
 * export, reset and tree id, and reads files back by the same rules (a regular
 * file, no symlink, under the cap). Not a boundary: nothing is isolated.
 */
export class TempSandbox implements Sandbox {
  /** Every session opened, in order (stopped ones included). */
  readonly sessions: TempSandboxSession[] = [];
  private readonly live = new Set<TempSandboxSession>();

  constructor(private readonly opts: TempSandboxOptions = {}) {}

  async ensureImage(): Promise<void> {}

  /** One image for every session: saved setup states of this sandbox share it. */
  async imageId(): Promise<string | null> {
    return 'temp-sandbox';
  }

  async open(spec: SandboxSpec): Promise<SandboxSession> {
    const name = `chalk-sandbox-${spec.repo}-${spec.ticket}${spec.suffix ? `-${spec.suffix}` : ''}`.replace(
      /[^A-Za-z0-9_.-]/g,
      '-',
    );
    for (const s of [...this.live]) if (s.name === name) await s.stop();
    const root = mkdtempSync(join(this.opts.parent ?? tmpdir(), 'chalk-tsbx-'));
    const session = new TempSandboxSession(name, spec, root, {
      maxOutputBytes: this.opts.maxOutputBytes ?? 64 * 1024 * 1024,
      agentEnv: this.opts.agentEnv ?? {},
      onStop: (s) => this.live.delete(s),
    });
    this.sessions.push(session);
    this.live.add(session);
    return session;
  }

  async removeLeftovers(filter: { repo: string; ticket?: string }): Promise<string[]> {
    const gone: string[] = [];
    for (const s of [...this.live]) {
      if (s.spec.repo === filter.repo && (!filter.ticket || s.spec.ticket === filter.ticket)) {
        await s.stop();
        gone.push(s.name);
      }
    }
    return gone;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.live].map((s) => s.stop()));
  }

  /** Sessions not yet stopped. */
  openSessions(): TempSandboxSession[] {
    return [...this.live];
  }
}

interface SessionSettings {
  maxOutputBytes: number;
  agentEnv: Record<string, string>;
  onStop: (s: TempSandboxSession) => void;
}

const scriptText = (name: string) => readFileSync(join(SHARE_DIR, 'sandbox', 'scripts', `${name}.sh`), 'utf8');

/** A script's failure as the Docker sandbox words it: its name, its exit and its last line. */
function scriptFailed(name: string, r: ExecResult): Error {
  const first = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
  return new Error(`sandbox ${name} failed (exit ${r.exitCode})${first ? `: ${first}` : ''}`);
}

export class TempSandboxSession implements SandboxSession {
  private stopped = false;
  /** Process groups of the commands started, which reapStrays ends. */
  private readonly groups = new Set<number>();

  constructor(
    readonly name: string,
    readonly spec: SandboxSpec,
    /** The directory that stands for the sandbox's `/`. */
    readonly root: string,
    private readonly settings: SessionSettings,
  ) {
    for (const d of ['work', 'chalk', 'tmp', 'home/chalk']) mkdirSync(join(root, d), { recursive: true });
  }

  /** The host path of a sandbox path (relative paths are in the clone). */
  hostPath(path: string): string {
    return isAbsolute(path) ? join(this.root, path) : join(this.root, SANDBOX_PATHS.repo, path);
  }

  /** A command's text with the sandbox's directories mapped into the session's root. */
  mapCommand(command: string): string {
    return command.replace(SANDBOX_DIR, (m) => join(this.root, m));
  }

  /** As the port says: the agent CLI runs only once what earlier commands left running has ended. */
  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (opts.agent) await this.reapStrays();
    return this.run(this.mapCommand(command), opts);
  }

  /**
   * Runs a command whose paths are already the host's; with `toFd` its stdout is written
   * there (`written` bytes) instead of kept, with `from` its stdin is that stream.
   */
  private run(
    command: string,
    opts: ExecOptions & { toFd?: number; from?: NodeJS.ReadableStream } = {},
  ): Promise<ExecResult & { written: number }> {
    if (this.stopped) return Promise.reject(new Error(`sandbox ${this.name} is stopped`));
    opts.signal?.throwIfAborted();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: join(this.root, 'home/chalk'),
      TMPDIR: join(this.root, 'tmp'),
      LANG: 'C.UTF-8',
      GIT_CONFIG_NOSYSTEM: '1',
      ...opts.env,
      ...(opts.agent ? this.settings.agentEnv : {}),
    };
    const cap = opts.maxOutputBytes ?? this.settings.maxOutputBytes;
    const cwd = this.hostPath(opts.cwd ?? SANDBOX_PATHS.repo);
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: 'pipe' });
      } catch (err) {
        reject(err);
        return;
      }
      const pgid = child.pid;
      if (pgid !== undefined) this.groups.add(pgid);
      const out = new KeptOutput();
      const err = new KeptOutput();
      let bytes = 0;
      let written = 0;
      let capped = false;
      let timedOut = false;
      let aborted = false;
      const kill = () => {
        if (pgid === undefined) return;
        try {
          process.kill(-pgid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const take = (stream: 'stdout' | 'stderr', kept: KeptOutput) => (chunk: Buffer) => {
        if (capped) return;
        bytes += chunk.length;
        if (bytes > cap) {
          capped = true;
          kill();
          return;
        }
        if (stream === 'stdout' && opts.toFd !== undefined) {
          writeSync(opts.toFd, chunk);
          written += chunk.length;
          return;
        }
        kept.add(chunk);
        opts.onOutput?.(chunk, stream);
      };
      child.stdout?.on('data', take('stdout', out));
      child.stderr?.on('data', take('stderr', err));
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, opts.timeoutMs)
        : undefined;
      const onAbort = () => {
        aborted = true;
        kill();
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', (e) => {
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        reject(e);
      });
      child.on('close', (code, sig) => {
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (aborted) {
          reject(opts.signal?.reason ?? new Error('aborted'));
          return;
        }
        resolve({
          exitCode: timedOut ? 124 : (code ?? (sig ? 137 : 1)),
          stdout: out.text(),
          stderr: err.text(),
          timedOut,
          outputCapped: capped,
          written,
        });
      });
      child.stdin?.on('error', () => {});
      if (opts.from && child.stdin) opts.from.pipe(child.stdin);
      else child.stdin?.end(opts.stdin ?? '');
    });
  }

  /** One of the Docker sandbox's scripts, run here; its trimmed stdout, or throws. */
  private async script(name: string, env: Record<string, string> = {}, stdin?: string): Promise<string> {
    const r = await this.exec(scriptText(name), { env, cwd: '/work', ...(stdin !== undefined ? { stdin } : {}) });
    if (r.exitCode !== 0) throw scriptFailed(name, r);
    return r.stdout.trim();
  }

  async clone(): Promise<string> {
    // The Docker sandbox streams the bundle in on stdin; here it is copied from the host path.
    const source = `'${this.spec.source.replace(/'/g, `'\\''`)}'`;
    const text = this.mapCommand(scriptText('clone')).replace('cat >"$in"', `cp -- ${source} "$in"`);
    const r = await this.run(text, {
      cwd: '/work',
      env: {
        BRANCH: this.spec.branch,
        AUTHOR_NAME: this.spec.author.name,
        AUTHOR_EMAIL: this.spec.author.email,
        BASE_NAME: this.spec.baseBranch?.name ?? '',
        BASE_COMMIT: this.spec.baseBranch?.commit ?? '',
        SHALLOW: (this.spec.shallow ?? []).join(' '),
      },
    });
    if (r.exitCode !== 0) throw new Error(`sandbox clone failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
    return r.stdout.trim();
  }

  async head(): Promise<string> {
    const r = await this.exec('git rev-parse HEAD');
    if (r.exitCode !== 0) throw new Error(`sandbox head failed: ${r.stderr.trim()}`);
    return r.stdout.trim();
  }

  async commitAll(message: string, opts: CommitOptions = {}): Promise<string | null> {
    const out = await this.script('commit', commitEnv(message, opts));
    return out === '' ? null : out;
  }

  async graftTree(o: GraftOptions): Promise<string> {
    const id = await this.script('graft', graftEnv(o));
    if (!OBJECT_ID.test(id)) throw new Error(`sandbox graft printed no tree id`);
    return id;
  }

  async restoreTree(tree: string): Promise<string | null> {
    if (!OBJECT_ID.test(tree)) throw new Error(`not an object id: ${JSON.stringify(tree)}`);
    return treeIdIn(await this.script('restore', { TREE: tree }));
  }

  async exportBundle(base: string, dest: string, o: { commit?: CommitRequest } = {}): Promise<string | null> {
    const { commit } = o;
    const text = commit ? commitThenExport(scriptText('commit'), scriptText('export')) : scriptText('export');
    const env = { BASE: base, ...(commit ? commitEnv(commit.message, commit) : {}) };
    const r = await this.exec(text, { env, cwd: '/work' });
    if (r.exitCode !== 0) throw scriptFailed(commit && r.exitCode === COMMIT_FAILED_EXIT ? 'commit' : 'export', r);
    const head = r.stdout.trim();
    if (head !== '') await keepOutBundle(this, dest);
    return head === '' ? null : head;
  }

  async readFile(path: string, opts: { maxBytes: number }): Promise<Buffer | null> {
    const p = this.hostPath(path);
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(p);
    } catch {
      return null;
    }
    if (st.isSymbolicLink()) throw new SandboxFileError(`${path} in the sandbox is a symbolic link`);
    if (!st.isFile()) throw new SandboxFileError(`${path} in the sandbox is not a regular file`);
    let fd: number;
    try {
      fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      throw new SandboxFileError(`${path} in the sandbox is not a regular file`);
    }
    try {
      const opened = fstatSync(fd);
      if (opened.ino !== st.ino || opened.dev !== st.dev || !opened.isFile()) {
        throw new SandboxFileError(`${path} in the sandbox changed while read`);
      }
      if (opened.size > opts.maxBytes) {
        throw new SandboxFileError(`${path} in the sandbox is ${opened.size} bytes, over ${opts.maxBytes}`);
      }
      const buf = Buffer.alloc(opts.maxBytes + 1);
      let n = 0;
      for (;;) {
        const got = readSync(fd, buf, n, buf.length - n, null);
        if (got === 0) break;
        n += got;
        if (n > opts.maxBytes) throw new SandboxFileError(`${path} in the sandbox is over ${opts.maxBytes} bytes`);
      }
      return buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  }

  async putFile(name: string, content: string): Promise<void> {
    if (!PUT_NAME.test(name)) throw new Error(`not a file name for ${SANDBOX_PATHS.io}: ${name}`);
    const dir = join(this.root, SANDBOX_PATHS.io);
    const tmp = join(dir, `.put.${randomBytes(6).toString('hex')}`);
    writeFileSync(tmp, content, { mode: 0o644, flag: 'wx' });
    renameSync(tmp, join(dir, name));
  }

  async reapStrays(): Promise<void> {
    for (const g of this.groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // gone
      }
    }
    this.groups.clear();
  }

  async reset(): Promise<void> {
    await this.script('reset');
  }

  async treeId(exclude: string[] = []): Promise<string | null> {
    try {
      return treeIdIn(await this.script('tree-id', { EXCLUDE: exclude.join('\n') }));
    } catch {
      return null;
    }
  }

  treeIds(o: { exclude: string[]; unlessIgnored: string[] }): Promise<TreeIds> {
    return treeIdsBy((env) => this.script('tree-id', env), o);
  }

  saveState(dest: string, opts: StateSaveOptions): Promise<SavedState> {
    return writeState(dest, async (fd) => {
      const r = await this.run(this.mapCommand(scriptText('state-save')), {
        cwd: '/work',
        env: { DIRS: opts.dirs.join('\n') },
        maxOutputBytes: opts.maxBytes,
        toFd: fd,
        ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      return stateOutcome({ ...r, bytes: r.written }, dest, opts.maxBytes);
    });
  }

  async restoreState(src: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    const r = await this.run(this.mapCommand(scriptText('state-restore')), {
      cwd: '/work',
      from: readState(src),
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (r.exitCode !== 0) throw new Error(`could not restore the setup state (exit ${r.exitCode}): ${r.stderr.trim()}`);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.reapStrays();
    rmSync(this.root, { recursive: true, force: true });
    this.settings.onStop(this);
  }

  /** Whether stop() was called. */
  get isStopped(): boolean {
    return this.stopped;
  }
}
