import { createReadStream } from 'node:fs';
import type Dockerode from 'dockerode';
import { UserError } from '../../core/errors.js';
import { keepOutBundle } from '../../core/fs/sandbox-bundle.js';
import {
  type ExecOptions,
  type ExecResult,
  PUT_NAME,
  SANDBOX_PATHS,
  SandboxFileError,
  type SandboxSession,
  type SandboxSpec,
} from '../../core/ports/sandbox.js';
import { statusOf } from './docker.js';
import { bareExec, execForBytes, execInContainer, type RawExecOptions } from './exec.js';
import { type ScriptName, script } from './scripts.js';

/** Git steps inside the sandbox get this long; a hung one is killed. */
const GIT_TIMEOUT_MS = 300_000;
/** Reading a file back gets this long (a FIFO swapped in would otherwise hang the read). */
const READ_TIMEOUT_MS = 120_000;

export class SandboxGitError extends Error {
  override name = 'SandboxGitError';
}

export interface SessionSettings {
  /** The agent's environment entries (credentials, gateway, telemetry), for `exec(..., { agent: true })` only. */
  agentEnv: Record<string, string>;
  /** The host's output cap for any command. */
  maxOutputBytes: number;
  /** The image's name, for error lines. */
  image: string;
  /** Called once the session is stopped. */
  onStop: (s: DockerSandboxSession) => void;
}

/** One run's container, and the git operations that bring its work out. */
export class DockerSandboxSession implements SandboxSession {
  private stopped: Promise<void> | undefined;
  /** The container's main process (`sleep infinity`), which reaping spares. */
  private mainPid = '';

  constructor(
    readonly name: string,
    readonly spec: SandboxSpec,
    private readonly container: Dockerode.Container,
    private readonly settings: SessionSettings,
  ) {}

  private raw(opts: Partial<RawExecOptions> = {}): RawExecOptions {
    return { defaultCwd: SANDBOX_PATHS.repo, maxOutputBytes: this.settings.maxOutputBytes, ...opts };
  }

  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const { agent, maxOutputBytes, ...rest } = opts;
    const env = agent ? { ...opts.env, ...this.settings.agentEnv } : opts.env;
    return execInContainer(
      this.container,
      command,
      this.raw({ ...rest, env, ...(maxOutputBytes ? { maxOutputBytes } : {}) }),
    );
  }

  /** Runs one of the shipped scripts as the command itself (arguments in env); its trimmed stdout, or throws. */
  private async git(name: ScriptName, env: Record<string, string> = {}, stdin?: NodeJS.ReadableStream) {
    const r = await execInContainer(
      this.container,
      script(name),
      this.raw({ env, cwd: '/work', timeoutMs: GIT_TIMEOUT_MS, stdin }),
    );
    if (r.exitCode !== 0) {
      const first = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
      throw new SandboxGitError(`sandbox ${name} failed (exit ${r.exitCode})${first ? `: ${first}` : ''}`);
    }
    return r.stdout.trim();
  }

  /** Records the container's main process; called once, right after the start, when it is init's only child. */
  async recordMainProcess(): Promise<void> {
    const r = await execInContainer(this.container, 'cat /proc/1/task/1/children', this.raw({ cwd: '/' }));
    this.mainPid = r.stdout.trim().split(/\s+/)[0] ?? '';
  }

  async clone(): Promise<string> {
    try {
      return await this.git(
        'clone',
        {
          BRANCH: this.spec.branch,
          AUTHOR_NAME: this.spec.author.name,
          AUTHOR_EMAIL: this.spec.author.email,
          BASE_NAME: this.spec.baseBranch?.name ?? '',
          BASE_COMMIT: this.spec.baseBranch?.commit ?? '',
        },
        createReadStream(this.spec.source),
      );
    } catch (err) {
      const m = /\(exit (97|98|127)\): ?(.*)$/.exec((err as Error).message);
      if (!m) throw err;
      const what =
        m[1] === '97'
          ? `has ${m[2]}; Chalk needs bash >= 5.2`
          : m[1] === '98'
            ? 'has no git'
            : 'has no bash or coreutils';
      throw new UserError(`sandbox image '${this.settings.image}' ${what} in the sandbox`);
    }
  }

  async head(): Promise<string> {
    const r = await this.exec('git rev-parse HEAD', { timeoutMs: GIT_TIMEOUT_MS });
    if (r.exitCode !== 0) throw new SandboxGitError(`sandbox head failed: ${r.stderr.trim()}`);
    return r.stdout.trim();
  }

  async commitAll(message: string, opts: { allowEmpty?: boolean } = {}): Promise<string | null> {
    const out = await this.git('commit', { MESSAGE: message, ALLOW_EMPTY: opts.allowEmpty ? '1' : '' });
    return out === '' ? null : out;
  }

  async exportBundle(base: string, dest: string): Promise<string | null> {
    const head = await this.git('export', { BASE: base });
    if (head !== '') await keepOutBundle(this, dest);
    return head === '' ? null : head;
  }

  async readFile(path: string, opts: { maxBytes: number }): Promise<Buffer | null> {
    const r = await execForBytes(
      this.container,
      script('read-file'),
      [path, String(opts.maxBytes)],
      this.raw({ timeoutMs: READ_TIMEOUT_MS, maxOutputBytes: opts.maxBytes + 64 * 1024 }),
    );
    if (r.exitCode === 4) return null;
    const why = r.stderr.trim().split('\n').pop() ?? '';
    if (r.exitCode === 3 || r.exitCode === 6) throw new SandboxFileError(`${path} in the sandbox ${why}`);
    if (r.outputCapped || r.bytes.length > opts.maxBytes) {
      throw new SandboxFileError(`${path} in the sandbox is over ${opts.maxBytes} bytes`);
    }
    if (r.exitCode !== 0) throw new SandboxFileError(`could not read ${path} in the sandbox (exit ${r.exitCode})`);
    return r.bytes;
  }

  async putFile(name: string, content: string): Promise<void> {
    if (!PUT_NAME.test(name)) throw new Error(`not a file name for ${SANDBOX_PATHS.io}: ${name}`);
    const r = await execInContainer(
      this.container,
      `${script('put-file')}`,
      this.raw({ cwd: '/', user: '0:0', stdin: content, env: { NAME: name }, timeoutMs: GIT_TIMEOUT_MS }),
    );
    if (r.exitCode !== 0) throw new SandboxGitError(`could not put ${name} into the sandbox: ${r.stderr.trim()}`);
  }

  async reapStrays(): Promise<void> {
    try {
      await bareExec(this.container, ['bash', '-c', script('reap'), 'reap', this.mainPid || '0']);
    } catch (err) {
      if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
    }
  }

  async reset(): Promise<void> {
    await this.git('reset');
  }

  async treeId(exclude: string[] = []): Promise<string | null> {
    try {
      const id = await this.git('tree-id', { EXCLUDE: exclude.join('\n') });
      return /^[0-9a-f]{40,64}$/.test(id) ? id : null;
    } catch {
      return null;
    }
  }

  stop(): Promise<void> {
    this.stopped ??= this.container
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      })
      .finally(() => this.settings.onStop(this));
    return this.stopped;
  }
}
