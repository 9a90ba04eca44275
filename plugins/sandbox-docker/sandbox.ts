import type { Config } from '../../core/config/config.js';
import { UserError } from '../../core/errors.js';
import type { OneShotRunner } from '../../core/ports/agent.js';
import type { Log } from '../../core/ports/log.js';
import type { ExecResult, Sandbox, SandboxCapacity, SandboxSession, SandboxSpec } from '../../core/ports/sandbox.js';
import {
  autoCpus,
  type ContainerShape,
  oneShotContainerOptions,
  PIDS_LIMIT,
  runContainerOptions,
  sandboxUser,
} from './container-config.js';
import { describeDockerError, docker, statusOf } from './docker.js';
import { type SandboxEnv, sandboxEnv, type TelemetrySettings } from './env.js';
import { execInContainer } from './exec.js';
import { ensureImage } from './image.js';
import { containerName, labelFilter } from './names.js';
import { quote } from './scripts.js';
import { DockerSandboxSession } from './session.js';
import { closeAllSessions, installSignalHandlers, track, untrack } from './signals.js';

export interface DockerSandboxOptions {
  image: string;
  tmpfsSize: string;
  telemetry: TelemetrySettings | null;
  /** MiB of memory per sandbox (no swap beyond it). */
  memoryMb?: number;
  /** CPUs per sandbox; `auto` is half the engine's, at least one. */
  cpus?: number | 'auto';
  /** The most output bytes the host takes from one command. */
  maxOutputBytes?: number;
  /** Where credentials come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Install the SIGINT/SIGTERM handlers on the first open (default true). */
  handleSignals?: boolean;
  log?: Log;
}

const MIB = 1024 * 1024;

/** The Sandbox port on the Docker engine, through dockerode. */
export class DockerSandbox implements Sandbox, OneShotRunner, SandboxCapacity {
  constructor(private readonly opts: DockerSandboxOptions) {}

  static fromConfig(config: Config, log?: Log): DockerSandbox {
    const endpoint = config.str('CHALK_OTEL_ENDPOINT');
    return new DockerSandbox({
      image: config.str('CHALK_IMAGE'),
      tmpfsSize: config.str('CHALK_TMPFS_SIZE'),
      telemetry:
        endpoint === ''
          ? null
          : {
              endpoint,
              protocol: config.str('CHALK_OTEL_PROTOCOL'),
              signals: config.list('CHALK_OTEL_SIGNALS'),
              headers: config.bool('CHALK_OTEL_HEADERS'),
            },
      memoryMb: config.num('CHALK_SANDBOX_MEM_MB'),
      cpus: config.str('CHALK_SANDBOX_CPUS') === 'auto' ? 'auto' : Number(config.str('CHALK_SANDBOX_CPUS')),
      maxOutputBytes: config.num('CHALK_OUTPUT_CAP_MB') * MIB,
      log,
    });
  }

  get image(): string {
    return this.opts.image;
  }

  ensureImage(): Promise<void> {
    return ensureImage(this.opts.image, { onLine: (l) => this.opts.log?.debug(l) });
  }

  async removeLeftovers(filter: { repo: string; ticket?: string; kind?: string }): Promise<string[]> {
    const d = await docker();
    const found = await d.listContainers({ all: true, filters: { label: labelFilter(filter) } });
    const removed: string[] = [];
    for (const c of found) {
      try {
        await d.getContainer(c.Id).remove({ force: true });
        removed.push((c.Names[0] ?? c.Id).replace(/^\//, ''));
      } catch (err) {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      }
    }
    return removed;
  }

  /** The engine's CPUs and memory (`docker info`) and one sandbox's memory; null when the engine does not answer. */
  async capacity(): Promise<{ cpus: number; memoryMb: number; sandboxMemoryMb: number } | null> {
    try {
      const info = (await (await docker()).info()) as { NCPU?: number; MemTotal?: number };
      if (!info.NCPU || !info.MemTotal) return null;
      return {
        cpus: info.NCPU,
        memoryMb: Math.floor(info.MemTotal / MIB),
        sandboxMemoryMb: this.memoryMb,
      };
    } catch {
      return null;
    }
  }

  private cpus: Promise<number> | undefined;

  /** CPUs per sandbox: the setting, or for `auto` half of what the engine reports (4 when it cannot say). */
  private cpuLimit(): Promise<number> {
    const set = this.opts.cpus ?? 'auto';
    if (set !== 'auto') return Promise.resolve(set);
    this.cpus ??= docker()
      .then((d) => d.info())
      .then((info: { NCPU?: number }) => autoCpus(info.NCPU ?? 4))
      .catch(() => autoCpus(4));
    return this.cpus;
  }

  private async shape(env: SandboxEnv, tmpfsSize: string): Promise<ContainerShape> {
    return {
      env: env.container,
      needsHostAlias: env.needsHostAlias,
      user: sandboxUser(),
      tmpfsSize,
      limits: { memoryMb: this.memoryMb, cpus: await this.cpuLimit(), pids: PIDS_LIMIT },
    };
  }

  private get memoryMb(): number {
    return this.opts.memoryMb ?? 2048;
  }

  private get maxOutputBytes(): number {
    return this.opts.maxOutputBytes ?? 64 * MIB;
  }

  async open(spec: SandboxSpec): Promise<SandboxSession> {
    const d = await docker();
    const name = containerName(spec);
    // The next run of a ticket removes what a killed run left behind (only its own kind:
    // opening a `distill` sandbox leaves the ticket's run sandbox alone).
    await this.removeLeftovers({ repo: spec.repo, ticket: spec.ticket, kind: spec.suffix || 'run' });
    await d
      .getContainer(name)
      .remove({ force: true })
      .catch(() => undefined);
    const env = sandboxEnv(this.opts.env ?? process.env, this.opts.telemetry, spec.env);
    if (this.opts.handleSignals !== false) installSignalHandlers();
    let container: Awaited<ReturnType<typeof d.createContainer>>;
    try {
      container = await d.createContainer(
        runContainerOptions({
          name,
          image: this.opts.image,
          spec,
          shape: await this.shape(env, this.opts.tmpfsSize),
        }),
      );
    } catch (err) {
      if (statusOf(err) === 404) {
        throw new UserError(`sandbox image '${this.opts.image}' not found locally; run: chalk sandbox build`);
      }
      throw new UserError(`could not create sandbox ${name}: ${describeDockerError(err)}`);
    }
    const session = new DockerSandboxSession(name, spec, container, {
      agentEnv: env.agent,
      maxOutputBytes: this.maxOutputBytes,
      image: this.opts.image,
      onStop: (s) => untrack(s),
    });
    track(session);
    try {
      await container.start();
      await session.recordMainProcess();
    } catch (err) {
      await session.stop().catch(() => undefined);
      throw new UserError(`could not start sandbox ${name}: ${describeDockerError(err)}`);
    }
    return session;
  }

  closeAll(): Promise<void> {
    return closeAllSessions();
  }

  /** One command of the agent CLI in a throwaway container of the image (no clone, no mounts), removed afterwards. */
  async runOnce(argv: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
    const d = await docker();
    const env = sandboxEnv(this.opts.env ?? process.env, this.opts.telemetry);
    const container = await d.createContainer(
      oneShotContainerOptions({ image: this.opts.image, shape: await this.shape(env, '64m') }),
    );
    const session = { stop: () => container.remove({ force: true }).catch(() => undefined) };
    track(session);
    try {
      await container.start();
      // The probe is the agent CLI itself: it gets the agent's environment.
      return await execInContainer(container, argv.map(quote).join(' '), {
        ...opts,
        env: env.agent,
        defaultCwd: '/work',
        maxOutputBytes: this.maxOutputBytes,
      });
    } finally {
      await session.stop();
      untrack(session);
    }
  }
}
