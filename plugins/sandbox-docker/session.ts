import { createReadStream } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type Dockerode from 'dockerode';
import { readState, stateOutcome, writeNewFile, writeState } from '../../core/host.js';
import {
  BUNDLE_MAX_BYTES,
  COMMIT_FAILED_EXIT,
  type CommitOptions,
  type CommitRequest,
  commitEnv,
  commitThenExport,
  type ExecOptions,
  type ExecResult,
  type GraftOptions,
  graftEnv,
  type MeteredUsage,
  OBJECT_ID,
  PUT_NAME,
  SANDBOX_PATHS,
  type SandboxEgress,
  SandboxFileError,
  type SandboxSession,
  type SandboxSpec,
  type SavedState,
  type StateSaveOptions,
  type TreeIds,
  treeIdIn,
  treeIdsBy,
  UserError,
} from '../../core/plugin.js';
import { engineGone, statusOf } from './docker.js';
import type { CallUsage } from './egress/daemon/runs.js';
import type { RunEgress } from './egress/run-net.js';
import { asAgent, bareExec, execInContainer, execToFile, type RawExecOptions } from './exec.js';
import { type KeeperAnswer, KeeperChannel, type KeeperRun } from './keeper-channel.js';
import { type ScriptName, script } from './scripts.js';

/** Git steps inside the sandbox get this long; a hung one is killed. */
const GIT_TIMEOUT_MS = 300_000;
/** Saving or restoring a setup's state gets this long by default. */
const STATE_TIMEOUT_MS = 300_000;
/** Reading a file back gets this long (a FIFO swapped in would otherwise hang the read). */
const READ_TIMEOUT_MS = 120_000;
/** How long the keeper gets to come up, and to finish a round of reaping. */
const KEEPER_TIMEOUT_MS = 20_000;

/** The most of a script's text output (and of any stderr) the keeper reads back. */
const TEXT_ANSWER_BYTES = 1024 * 1024;

/** What the memory cgroup says of OOM kills (v2, then v1), read as root. */
const OOM_COUNT = {
  name: 'oom-count',
  text: 'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null',
};

/** The cap an agent command gets at the gateway when its caller names none. */
const DEFAULT_CALL_CAP_USD = 1;

const metered = (u: CallUsage): MeteredUsage => ({
  costUsd: u.costUsd,
  inputTokens: u.inputTokens,
  outputTokens: u.outputTokens,
  cacheReadTokens: u.cacheReadTokens,
  cacheCreationTokens: u.cacheCreationTokens,
  model: u.model,
  requests: u.requests,
  unmetered: u.unmetered,
  unpriced: u.unpriced,
  refusedOverCap: u.refusedOverCap,
});

export class SandboxGitError extends Error {
  override name = 'SandboxGitError';
}

/** The sandbox's leftover processes could not be ended: nothing more may run in it. */
export class SandboxReapError extends Error {
  override name = 'SandboxReapError';
}

/** One row of `docker top` as asked for here: host pid, parent pid, state, name. */
interface TopRow {
  pid: string;
  ppid: string;
  stat: string;
  comm: string;
}

/** The processes as the sandbox sees them (top.sh), for gVisor, whose processes `docker top` cannot see. */
async function processesInside(container: Dockerode.Container): Promise<TopRow[]> {
  const out = await bareExec(container, ['bash', '-c', script('top')], '0:0');
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [pid = '', ppid = '', stat = '', ...comm] = l.split(' ');
      return { pid, ppid, stat, comm: comm.join(' ') };
    });
}

/** The container's processes as the engine's host sees them (no exec: it works when every pid is taken). */
async function processes(container: Dockerode.Container): Promise<TopRow[]> {
  const top = (await container.top({ ps_args: '-o pid,ppid,stat,comm' })) as {
    Titles: string[];
    Processes: string[][];
  };
  const col = (name: string) => top.Titles.indexOf(name);
  const [pid, ppid, stat, comm] = [col('PID'), col('PPID'), col('STAT'), col('COMMAND')];
  return top.Processes.map((p) => ({
    pid: p[pid] ?? '',
    ppid: p[ppid] ?? '',
    stat: p[stat] ?? '',
    comm: p[comm] ?? '',
  }));
}

export interface SessionSettings {
  /** The agent's environment entries (credentials, gateway, telemetry), for `exec(..., { agent: true })` only. */
  agentEnv: Record<string, string>;
  /** The host's output cap for any command. */
  maxOutputBytes: number;
  /** The image's name, for error lines. */
  image: string;
  /** The sandbox's network and way out; removed after the container. */
  egress: RunEgress;
  /** What the sandbox may reach, in one line (the run's log). */
  egressSummary: string;
  /** Who every command runs as (`uid:gid`, never root). */
  user: string;
  /** MiB of memory the sandbox has (CHALK_SANDBOX_MEM_MB), for the line of a command it ran out of. */
  memoryMb: number;
  /**
   * The engine's `docker top` cannot see the sandbox's processes (gVisor keeps its own): they are
   * listed by a root exec inside instead, after the keeper's kill, when pids are free again.
   */
  topInside?: boolean;
  /** Called once the session is stopped. */
  onStop: (s: DockerSandboxSession) => void;
}

/** One run's container, and the git operations that bring its work out. */
export class DockerSandboxSession implements SandboxSession {
  private stopped: Promise<void> | undefined;
  /** A command ran since the last reaping: something it started may still run. */
  private dirty = false;
  /** Processes the kernel has killed for memory in this sandbox, as last counted. */
  private oomKills = 0;
  /** The keeper's channel (keeper-channel.ts), attached on first use. */
  private channel: Promise<KeeperChannel> | undefined;

  constructor(
    readonly name: string,
    readonly spec: SandboxSpec,
    private readonly container: Dockerode.Container,
    private readonly settings: SessionSettings,
  ) {}

  /** Every exec's options: the sandbox user, the clone, the output cap; the session is dirty from here on. */
  private raw(opts: Partial<RawExecOptions> = {}): RawExecOptions {
    this.dirty = true;
    return {
      defaultCwd: SANDBOX_PATHS.repo,
      maxOutputBytes: this.settings.maxOutputBytes,
      user: this.settings.user,
      ...opts,
    };
  }

  /**
   * One of the harness's own scripts through the keeper's channel, as the sandbox user unless
   * `user` says root: no engine exec. The session is dirty afterwards, unless the keeper
   * ended every process once the script exited (`reapAfter`).
   */
  private async keeper(o: Omit<KeeperRun, 'user' | 'cwd' | 'cap'> & Partial<KeeperRun>): Promise<KeeperAnswer> {
    this.channel ??= KeeperChannel.attach(this.container);
    this.dirty = true;
    const r = await (await this.channel).run({
      user: this.settings.user,
      cwd: '/work',
      // The harness's scripts print ids and a line or two; the keeper reads text a byte at a time.
      cap: Math.min(this.settings.maxOutputBytes, TEXT_ANSWER_BYTES),
      ...o,
    });
    if (o.reapAfter && !r.timedOut) this.dirty = false;
    return r;
  }

  private processes(): Promise<TopRow[]> {
    return this.settings.topInside ? processesInside(this.container) : processes(this.container);
  }

  get egress(): SandboxEgress {
    return { summary: this.settings.egressSummary, refusals: () => this.settings.egress.refusals() };
  }

  /**
   * `command` in the sandbox as the sandbox user. The agent CLI (`agent`) gets
   * the gateway and the run's token, and runs only once every process left in
   * the sandbox has ended (the setup's, the rubric's, whatever the host's git
   * steps started): none is there to read its environment. It starts from a
   * root exec as the sandbox user (asAgent), so only it can write what the host
   * reads back. Its call is bracketed at the gateway: the token works only
   * inside, and what the gateway counts in between is the call's spend.
   */
  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const { agent, maxOutputBytes, budgetUsd, ...rest } = opts;
    const cap = maxOutputBytes ? { maxOutputBytes } : {};
    if (!agent) return this.explainKill(await execInContainer(this.container, command, this.raw({ ...rest, ...cap })));
    await this.reapStrays();
    const net = this.settings.egress;
    await net.beginCall(budgetUsd ?? DEFAULT_CALL_CAP_USD);
    let r: ExecResult | undefined;
    try {
      r = await execInContainer(
        this.container,
        asAgent(command, this.settings.user),
        this.raw({ ...rest, ...cap, env: { ...opts.env, ...this.settings.agentEnv }, user: '0:0' }),
      );
    } finally {
      const usage = await net.endCall().catch(() => null);
      if (r && usage) r = { ...r, metered: metered(usage) };
    }
    return this.explainKill(r);
  }

  /**
   * A command killed (exit 137) that neither its timeout nor its output cap
   * stopped: when the kernel killed a process for memory since the last count,
   * the result says so. The count is read as root (the agent cannot write
   * into what the host reads here) from the sandbox's memory cgroup.
   */
  private async explainKill(r: ExecResult): Promise<ExecResult> {
    if (r.exitCode !== 137 || r.timedOut || r.outputCapped) return r;
    const read = await this.keeper({
      script: OOM_COUNT,
      user: '0:0',
      cwd: '/',
      mode: 'text',
      timeoutMs: READ_TIMEOUT_MS,
    }).catch(() => null);
    const count = Number(/^oom_kill (\d+)$/m.exec(read?.stdout ?? '')?.[1] ?? Number.NaN);
    if (!Number.isFinite(count) || count <= this.oomKills) return r;
    this.oomKills = count;
    return { ...r, killedBy: `the sandbox ran out of memory (CHALK_SANDBOX_MEM_MB=${this.settings.memoryMb})` };
  }

  /**
   * Runs one of the shipped scripts (arguments in env); its trimmed stdout, or throws. Through the
   * keeper's channel; with a stream for stdin (the clone's bundle) as an exec of its own.
   */
  private async git(name: ScriptName, env: Record<string, string> = {}, stdin?: NodeJS.ReadableStream) {
    const r = stdin
      ? await execInContainer(
          this.container,
          script(name),
          this.raw({ env, cwd: '/work', timeoutMs: GIT_TIMEOUT_MS, stdin }),
        )
      : await this.keeper({ script: { name, text: script(name) }, env, mode: 'text', timeoutMs: GIT_TIMEOUT_MS });
    if (r.exitCode !== 0 || r.timedOut) {
      const first = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
      const why = r.timedOut ? `timed out after ${GIT_TIMEOUT_MS / 1000} s` : `exit ${r.exitCode}`;
      throw new SandboxGitError(`sandbox ${name} failed (${why})${first ? `: ${first}` : ''}`);
    }
    return r.stdout.trim();
  }

  /**
   * Records the init and the keeper, waiting until the keeper is ready to
   * reap (it names itself `reaped-0`); called once, right after the start,
   * when they are the container's only processes.
   */
  async recordOwnProcesses(): Promise<void> {
    const end = Date.now() + KEEPER_TIMEOUT_MS;
    for (;;) {
      const rows = await this.processes();
      const keeper = rows.find((r) => r.comm === 'reaped-0');
      const init = rows.find((r) => r.pid === keeper?.ppid);
      if (keeper && init && rows.length === 2) {
        return;
      }
      // keeper.sh falls back to `sleep infinity` where there is no bash to run it.
      if (rows.length === 2 && rows.some((r) => r.comm === 'sleep')) {
        throw new UserError(`sandbox image '${this.settings.image}' has no bash or coreutils in the sandbox`);
      }
      if (Date.now() > end) {
        throw new SandboxReapError(`the sandbox's keeper did not start (image '${this.settings.image}' needs bash)`);
      }
      await delay(10);
    }
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
          SHALLOW: (this.spec.shallow ?? []).join(' '),
          MIRROR: this.spec.mirror ? SANDBOX_PATHS.mirror : '',
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

  async commitAll(message: string, opts: CommitOptions = {}): Promise<string | null> {
    const out = await this.git('commit', commitEnv(message, opts));
    return out === '' ? null : out;
  }

  async graftTree(o: GraftOptions): Promise<string> {
    const id = await this.git('graft', graftEnv(o));
    if (!OBJECT_ID.test(id)) throw new Error(`sandbox graft printed no tree id`);
    return id;
  }

  async restoreTree(tree: string): Promise<string | null> {
    if (!OBJECT_ID.test(tree)) throw new Error(`not an object id: ${JSON.stringify(tree)}`);
    return treeIdIn(await this.git('restore', { TREE: tree }));
  }

  /**
   * export.sh prints the new HEAD on a line and then the bundle (TO_STDOUT=1), in one request;
   * every process is ended before it is read, so nothing changes it on its way out.
   */
  async exportBundle(base: string, dest: string, o: { commit?: CommitRequest } = {}): Promise<string | null> {
    const { commit } = o;
    const r = await this.keeper({
      script: commit
        ? { name: 'commit-export', text: commitThenExport(script('commit'), script('export')) }
        : { name: 'export', text: script('export') },
      env: { BASE: base, TO_STDOUT: '1', ...(commit ? commitEnv(commit.message, commit) : {}) },
      mode: 'bytes',
      cap: BUNDLE_MAX_BYTES + 128,
      reapAfter: true,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (r.capped) throw new SandboxFileError(`the sandbox's bundle is over ${BUNDLE_MAX_BYTES} bytes`);
    if (r.exitCode !== 0 || r.timedOut) {
      const first = r.stderr.trim().split('\n').pop() ?? '';
      const why = r.timedOut ? `timed out after ${GIT_TIMEOUT_MS / 1000} s` : `exit ${r.exitCode}`;
      const step = commit && r.exitCode === COMMIT_FAILED_EXIT ? 'commit' : 'export';
      throw new SandboxGitError(`sandbox ${step} failed (${why})${first ? `: ${first}` : ''}`);
    }
    if (r.bytes.length === 0) return null;
    const nl = r.bytes.indexOf(10);
    const head = nl < 0 ? '' : r.bytes.subarray(0, nl).toString('latin1');
    if (!OBJECT_ID.test(head)) throw new SandboxGitError('sandbox export printed no commit id');
    if (nl + 1 >= r.bytes.length) throw new SandboxFileError('the sandbox wrote no bundle');
    writeNewFile(dest, r.bytes.subarray(nl + 1));
    return head;
  }

  /** read-file.sh through the channel; every process is ended before the bytes are read. */
  async readFile(path: string, opts: { maxBytes: number }): Promise<Buffer | null> {
    const r = await this.keeper({
      script: { name: 'read-file', text: script('read-file') },
      args: [path, String(opts.maxBytes)],
      cwd: SANDBOX_PATHS.repo,
      mode: 'bytes',
      cap: opts.maxBytes,
      reapAfter: true,
      timeoutMs: READ_TIMEOUT_MS,
    });
    if (r.exitCode === 4) return null;
    const why = r.stderr.trim().split('\n').pop() ?? '';
    if (r.exitCode === 3 || r.exitCode === 6) throw new SandboxFileError(`${path} in the sandbox ${why}`);
    if (r.capped || r.bytes.length > opts.maxBytes) {
      throw new SandboxFileError(`${path} in the sandbox is over ${opts.maxBytes} bytes`);
    }
    if (r.exitCode !== 0 || r.timedOut) {
      throw new SandboxFileError(
        `could not read ${path} in the sandbox (${r.timedOut ? 'timed out' : `exit ${r.exitCode}`})`,
      );
    }
    return r.bytes;
  }

  async putFile(name: string, content: string): Promise<void> {
    if (!PUT_NAME.test(name)) throw new Error(`not a file name for ${SANDBOX_PATHS.io}: ${name}`);
    const r = await this.keeper({
      script: { name: 'put-file', text: script('put-file') },
      user: '0:0',
      cwd: '/',
      stdin: content,
      env: { NAME: name },
      mode: 'text',
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (r.exitCode !== 0) throw new SandboxGitError(`could not put ${name} into the sandbox: ${r.stderr.trim()}`);
  }

  /**
   * Ends every process in the sandbox but the init and the keeper: the keeper does it, asked on
   * its channel, in one kill(-1) and waits (reading /proc) until nothing else is left but
   * zombies (keeper.sh). Neither needs a new process in the container, so a fork bomb holding
   * every pid is ended too. Nothing to do when no command ran since the last round.
   */
  async reapStrays(): Promise<void> {
    if (!this.dirty) return;
    this.channel ??= KeeperChannel.attach(this.container);
    let left: number;
    try {
      left = await (await this.channel).reap(KEEPER_TIMEOUT_MS + 10_000);
    } catch (err) {
      if (statusOf(err) === 404 || statusOf(err) === 409) return;
      throw engineGone(err);
    }
    if (left !== 0) {
      throw new SandboxReapError(
        `could not end the processes left in the sandbox (${left} still running after ${KEEPER_TIMEOUT_MS / 1000} s)`,
      );
    }
    this.dirty = false;
  }

  async reset(): Promise<void> {
    await this.git('reset');
  }

  async treeId(exclude: string[] = []): Promise<string | null> {
    try {
      return treeIdIn(await this.git('tree-id', { EXCLUDE: exclude.join('\n') }));
    } catch {
      return null;
    }
  }

  treeIds(o: { exclude: string[]; unlessIgnored: string[] }): Promise<TreeIds> {
    return treeIdsBy((env) => this.git('tree-id', env), o);
  }

  saveState(dest: string, opts: StateSaveOptions): Promise<SavedState> {
    return writeState(dest, async (fd) => {
      const r = await execToFile(
        this.container,
        script('state-save'),
        fd,
        this.raw({
          cwd: '/work',
          env: { DIRS: opts.dirs.join('\n') },
          timeoutMs: opts.timeoutMs ?? STATE_TIMEOUT_MS,
          maxOutputBytes: opts.maxBytes,
          signal: opts.signal,
        }),
      );
      return stateOutcome(r, dest, opts.maxBytes);
    });
  }

  async restoreState(src: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<void> {
    const r = await execInContainer(
      this.container,
      script('state-restore'),
      this.raw({
        cwd: '/work',
        stdin: readState(src),
        timeoutMs: opts.timeoutMs ?? STATE_TIMEOUT_MS,
        signal: opts.signal,
      }),
    );
    if (r.exitCode !== 0) {
      const why = r.stderr.trim().split('\n').pop() ?? '';
      throw new SandboxGitError(`could not restore the setup state (exit ${r.exitCode})${why ? `: ${why}` : ''}`);
    }
  }

  stop(): Promise<void> {
    this.stopped ??= this.container
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      })
      // The run's token dies with its control connection; then the network goes.
      .finally(() => this.channel?.then((c) => c.close()).catch(() => undefined))
      .finally(() => this.settings.egress.close())
      .finally(() => this.settings.onStop(this));
    return this.stopped;
  }
}
