import { chownSync, mkdirSync } from 'node:fs';
import type { Config } from '../../core/config/config.js';
import { UserError } from '../../core/errors.js';
import type { OneShotRunner } from '../../core/ports/agent.js';
import type { Log } from '../../core/ports/log.js';
import type { ExecResult, Sandbox, SandboxSession, SandboxSpec } from '../../core/ports/sandbox.js';
import { run } from '../../core/process/run.js';
import { oneShotContainerOptions, runContainerOptions, SANDBOX_UID, sandboxUser } from './container-config.js';
import { describeDockerError, docker, statusOf } from './docker.js';
import { containerEnv, type TelemetrySettings } from './env.js';
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
  /** Where credentials come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Install the SIGINT/SIGTERM handlers on the first open (default true). */
  handleSignals?: boolean;
  log?: Log;
}

async function hostAuthor(cwd: string): Promise<{ name: string; email: string }> {
  const get = async (key: string) => {
    const r = await run('git', ['config', key], { cwd });
    return r.code === 0 ? r.stdout.trim() : '';
  };
  return { name: (await get('user.name')) || 'Chalk Agent', email: (await get('user.email')) || 'chalk@localhost' };
}

/** The Sandbox port on the Docker engine, through dockerode. */
export class DockerSandbox implements Sandbox, OneShotRunner {
  constructor(private readonly opts: DockerSandboxOptions) {}

  static fromConfig(config: Config, log?: Log): DockerSandbox {
    const endpoint = config.str('CHALK_OTEL_ENDPOINT');
    return new DockerSandbox({
      image: config.str('CHALK_IMAGE'),
      tmpfsSize: config.str('CHALK_TMPFS_SIZE'),
      telemetry:
        endpoint === ''
          ? null
          : { endpoint, protocol: config.str('CHALK_OTEL_PROTOCOL'), signals: config.list('CHALK_OTEL_SIGNALS') },
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
    const user = sandboxUser();
    mkdirSync(spec.ioDir, { recursive: true });
    if (user.startsWith(`${SANDBOX_UID}:`)) chownSync(spec.ioDir, SANDBOX_UID, SANDBOX_UID);
    const env = containerEnv(this.opts.env ?? process.env, this.opts.telemetry, spec.env);
    if (this.opts.handleSignals !== false) installSignalHandlers();
    let container: Awaited<ReturnType<typeof d.createContainer>>;
    try {
      container = await d.createContainer(
        runContainerOptions({ name, image: this.opts.image, spec, env, user, tmpfsSize: this.opts.tmpfsSize }),
      );
    } catch (err) {
      if (statusOf(err) === 404) {
        throw new UserError(`sandbox image '${this.opts.image}' not found locally; run: chalk sandbox build`);
      }
      throw new UserError(`could not create sandbox ${name}: ${describeDockerError(err)}`);
    }
    const author = spec.author ?? (await hostAuthor(spec.gitDir));
    const session = new DockerSandboxSession(name, spec, container, author, (s) => untrack(s), this.opts.image);
    track(session);
    try {
      await container.start();
    } catch (err) {
      await session.stop().catch(() => undefined);
      throw new UserError(`could not start sandbox ${name}: ${describeDockerError(err)}`);
    }
    return session;
  }

  closeAll(): Promise<void> {
    return closeAllSessions();
  }

  /** One command in a throwaway container of the image (no clone, no mounts), removed afterwards. */
  async runOnce(argv: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
    const d = await docker();
    const env = containerEnv(this.opts.env ?? process.env, this.opts.telemetry);
    const container = await d.createContainer(
      oneShotContainerOptions({ image: this.opts.image, env, user: sandboxUser() }),
    );
    const session = { stop: () => container.remove({ force: true }).catch(() => undefined) };
    track(session);
    try {
      await container.start();
      return await execInContainer(container, argv.map(quote).join(' '), { ...opts, defaultCwd: '/work' });
    } finally {
      await session.stop();
      untrack(session);
    }
  }
}
