import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { UserError } from '../../core/errors.js';
import {
  type ExecOptions,
  type ExecResult,
  SANDBOX_PATHS,
  type SandboxSession,
  type SandboxSpec,
} from '../../core/ports/sandbox.js';
import { runOk } from '../../core/process/run.js';
import { statusOf } from './docker.js';
import { execInContainer } from './exec.js';
import { type ScriptName, script } from './scripts.js';

/** Git steps inside the sandbox get this long; a hung one is killed. */
const GIT_TIMEOUT_MS = 300_000;

export class SandboxGitError extends Error {
  override name = 'SandboxGitError';
}

/** One run's container, and the git operations that bring its work home. */
export class DockerSandboxSession implements SandboxSession {
  private stopped: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly spec: SandboxSpec,
    private readonly container: Dockerode.Container,
    private readonly author: { name: string; email: string },
    private readonly onStop: (s: DockerSandboxSession) => void,
    private readonly image = 'the sandbox image',
  ) {}

  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return execInContainer(this.container, command, { ...opts, defaultCwd: SANDBOX_PATHS.repo });
  }

  /** Runs one of the shipped scripts as the command itself (arguments in env); its trimmed stdout, or throws. */
  private async git(name: ScriptName, env: Record<string, string> = {}): Promise<string> {
    const r = await execInContainer(this.container, script(name), {
      env,
      cwd: '/work',
      defaultCwd: '/work',
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (r.exitCode !== 0) {
      const first = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
      throw new SandboxGitError(`sandbox ${name} failed (exit ${r.exitCode})${first ? `: ${first}` : ''}`);
    }
    return r.stdout.trim();
  }

  async clone(): Promise<string> {
    try {
      return await this.git('clone', {
        BRANCH: this.spec.branch,
        AUTHOR_NAME: this.author.name,
        AUTHOR_EMAIL: this.author.email,
      });
    } catch (err) {
      const m = /\(exit (97|98|127)\): ?(.*)$/.exec((err as Error).message);
      if (!m) throw err;
      const what =
        m[1] === '97'
          ? `has ${m[2]}; Chalk needs bash >= 5.2`
          : m[1] === '98'
            ? 'has no git'
            : 'has no bash or coreutils';
      throw new UserError(`sandbox image '${this.image}' ${what} in the sandbox`);
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

  async exportBundle(base: string): Promise<string | null> {
    const out = await this.git('export', { BASE: base });
    return out === '' ? null : join(this.spec.ioDir, 'out.bundle');
  }

  async bringHome(base: string, worktree: string): Promise<string | null> {
    const bundle = await this.exportBundle(base);
    if (bundle === null) return null;
    // The bundle's HEAD must sit on top of the branch: fetch, then fast-forward only.
    await runOk('git', ['fetch', '--quiet', '--no-tags', bundle, 'HEAD'], { cwd: worktree });
    await runOk('git', ['merge', '--ff-only', '--quiet', 'FETCH_HEAD'], { cwd: worktree });
    return runOk('git', ['rev-parse', 'HEAD'], { cwd: worktree });
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
      .finally(() => this.onStop(this));
    return this.stopped;
  }
}
