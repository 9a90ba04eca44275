import {
  type Config,
  chosenBy,
  describeSetting,
  type ExecResult,
  type ImageReport,
  type Log,
  type MirrorRepo,
  type OneShotRunner,
  proposedLine,
  type Sandbox,
  type SandboxCapacity,
  type SandboxSession,
  type SandboxSpec,
  UserError,
} from '../../core/plugin.js';
import {
  autoCpus,
  type ContainerShape,
  oneShotContainerOptions,
  PIDS_LIMIT,
  runContainerOptions,
  sandboxUser,
} from './container-config.js';
import { describeDockerError, docker, statusOf } from './docker.js';
import { hostPort } from './egress/daemon/names.js';
import { type EgressMode, REGISTRIES } from './egress/daemon/policy.js';
import { EgressEngine } from './egress/engine.js';
import { type EgressPolicy, openRunEgress, type RunEgress, removeNetwork } from './egress/run-net.js';
import { proposals } from './egress/trust.js';
import { rewriteLoopback, type SandboxEnv, sandboxEnv, type TelemetrySettings } from './env.js';
import { asAgent, execInContainer } from './exec.js';
import { ensureImage } from './image.js';
import { currentImage, ensurePlannedImage, type ImageChoice } from './image-source.js';
import { makeMirror, mirrorsOn, mirrorTag, removeMirrors } from './mirror.js';
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
  /**
   * The repository set `cpus` (`.chalk/config`): it is held to this ceiling
   * (CHALK_CEILING_SANDBOX_CPUS, `auto` or a number). Absent: `cpus` stands.
   */
  cpusCeiling?: number | 'auto';
  /** The most output bytes the host takes from one command. */
  maxOutputBytes?: number;
  /** Where credentials come from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Install the SIGINT/SIGTERM handlers on the first open (default true). */
  handleSignals?: boolean;
  /** What sandboxes may reach through the egress proxy (default: the registries). */
  egress?: EgressPolicy;
  /** The engine's runtime for sandboxes (`runsc`: gVisor); default the engine's own. */
  runtime?: 'runc' | 'runsc';
  log?: Log;
  /**
   * The configuration the image is chosen from (image-source.ts: CHALK_IMAGE, the dev
   * container, CHALK_TOOLCHAIN), and the settings came from, for the lines that say who
   * chose them (`describe`); without it, `image` is used as it is.
   */
  config?: Config;
}

/** The allow list a run gets: the person's, the repository's trusted proposals, the telemetry endpoint. */
export function egressAllow(config: Config, log?: Log): string {
  const parts = [config.str('CHALK_EGRESS_ALLOW')];
  const proposed = config.str('CHALK_EGRESS_HOSTS');
  if (proposed !== '' && config.entry('CHALK_EGRESS_HOSTS').source === 'env') parts.push(proposed);
  else if (proposed !== '' && config.root) {
    const { trusted, untrusted } = proposals(config.root, proposed);
    parts.push(...trusted);
    if (untrusted.length > 0) {
      log?.warn(
        `.chalk/config asks for egress to ${untrusted.join(', ')} (CHALK_EGRESS_HOSTS), not trusted on this machine, so it stays closed; review it, then run: chalk egress trust`,
      );
    }
  }
  return parts.filter((p) => p !== '').join(',');
}

/**
 * The telemetry endpoint as a sandbox reaches it, through the egress proxy: the destination to
 * allow, and on a loopback address the engine's bridge gateway instead (the host, as the egress
 * container reaches it), allowed by address.
 */
export async function telemetryRoute(
  t: TelemetrySettings,
  bridgeGateway: () => Promise<string | undefined>,
): Promise<{ telemetry: TelemetrySettings; allow: string }> {
  let u: URL;
  try {
    u = new URL(t.endpoint);
  } catch {
    // Not a URL: the exporter fails inside, as it would anywhere.
    return { telemetry: t, allow: '' };
  }
  const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
  if (rewriteLoopback(t.endpoint).rewritten) {
    const gw = await bridgeGateway();
    if (!gw) return { telemetry: t, allow: '' };
    u.hostname = gw;
    const endpoint = t.endpoint.endsWith('/') ? u.toString() : u.toString().replace(/\/$/, '');
    return { telemetry: { ...t, endpoint }, allow: hostPort(gw, port) };
  }
  return { telemetry: t, allow: hostPort(u.hostname.replace(/^\[|\]$/g, ''), port) };
}

/**
 * Why a runtime the setting asks for cannot be used (the engine does not have it), in one line;
 * null when it can. A run refuses then: it never falls back to a weaker runtime.
 */
export function missingRuntime(wanted: string, registered: readonly string[]): string | null {
  if (registered.includes(wanted)) return null;
  return `CHALK_SANDBOX_RUNTIME=${wanted}, but the Docker engine has no ${wanted} runtime registered (it has ${registered.join(', ') || 'none'}); register it in /etc/docker/daemon.json ("runtimes") and reload the engine, or set CHALK_SANDBOX_RUNTIME=runc`;
}

/** The one-line summary of a run's way out, for its log. */
export function egressSummary(policy: EgressPolicy): string {
  const base: Record<EgressMode, string> = {
    registries: `the package registries (${REGISTRIES.map((r) => r.name).join(', ')})`,
    off: 'nothing',
    open: 'any public host',
  };
  const extra = policy.allow === '' ? '' : ` and ${policy.allow.split(',').join(', ')}`;
  return `the sandbox reaches ${base[policy.mode]}${extra} through Chalk's egress proxy (CHALK_EGRESS=${policy.mode}), and the model through Chalk's gateway, which holds the credential`;
}

const MIB = 1024 * 1024;
/** What a one-shot probe of the CLI may spend through the gateway (the probes send no message). */
const ONESHOT_CAP_USD = 0.01;

const cpusOf = (raw: string): number | 'auto' => (raw === 'auto' ? 'auto' : Number(raw));

/** What names a sandbox, its network and their labels. */
type SandboxIdentity = Pick<SandboxSpec, 'repo' | 'ticket' | 'runId' | 'suffix'>;

interface PreparedNetwork {
  net: RunEgress;
  telemetry: TelemetrySettings | null;
}

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
      cpus: cpusOf(config.str('CHALK_SANDBOX_CPUS')),
      ...(config.entry('CHALK_SANDBOX_CPUS').source === 'file'
        ? { cpusCeiling: cpusOf(config.str('CHALK_CEILING_SANDBOX_CPUS')) }
        : {}),
      maxOutputBytes: config.num('CHALK_OUTPUT_CAP_MB') * MIB,
      egress: { mode: config.str('CHALK_EGRESS') as EgressMode, allow: egressAllow(config, log) },
      runtime: config.str('CHALK_SANDBOX_RUNTIME') as 'runc' | 'runsc',
      log,
      config,
    });
  }

  private engine: EgressEngine | undefined;

  private get egressEngine(): EgressEngine {
    // The machine's: its CA and upstream proxy (the credentials come from `env`, per run).
    this.engine ??= new EgressEngine({ env: process.env, log: this.opts.log });
    return this.engine;
  }

  private get hostEnv(): NodeJS.ProcessEnv {
    return this.opts.env ?? process.env;
  }

  private get policy(): EgressPolicy {
    return this.opts.egress ?? { mode: 'registries', allow: '' };
  }

  private runtimeCheck: Promise<string | undefined> | undefined;

  /** The runtime to ask the engine for; a UserError when the setting names one the engine lacks. */
  runtimeName(): Promise<string | undefined> {
    const wanted = this.opts.runtime ?? 'runc';
    if (wanted === 'runc') return Promise.resolve(undefined);
    this.runtimeCheck ??= docker()
      .then((d) => d.info())
      .then((info: { Runtimes?: Record<string, unknown> }) => {
        const missing = missingRuntime(wanted, Object.keys(info.Runtimes ?? {}));
        if (missing === null) return wanted;
        this.runtimeCheck = undefined;
        throw new UserError(missing);
      });
    return this.runtimeCheck;
  }

  /**
   * Which limits a sandbox gets and who chose each (the run's first lines,
   * after the image's own line, startServices): the environment, the
   * repository (held to this machine's ceiling), or the default; and a
   * `.chalk/config` image, which is never used.
   */
  async describe(): Promise<string[]> {
    const config = this.opts.config;
    if (!config) return [];
    const cpus = await this.cpuLimit();
    const held = this.cpusHeldFrom;
    const cpusLine = held
      ? `CPUs ${cpus} (the repository asked ${held}, held to CHALK_CEILING_SANDBOX_CPUS (${chosenBy(config, 'CHALK_CEILING_SANDBOX_CPUS')}))`
      : config.str('CHALK_SANDBOX_CPUS') === 'auto'
        ? `CPUs ${cpus} (auto: half the engine's, ${chosenBy(config, 'CHALK_SANDBOX_CPUS')})`
        : describeSetting(config, 'CHALK_SANDBOX_CPUS');
    const proposed = proposedLine(config, 'CHALK_IMAGE');
    return [
      `sandbox: ${describeSetting(config, 'CHALK_SANDBOX_MEM_MB')}, ${describeSetting(config, 'CHALK_TMPFS_SIZE')}, ${cpusLine}, ${PIDS_LIMIT} pids (fixed)`,
      ...(proposed ? [proposed] : []),
    ];
  }

  /** The image chosen by `ensureImage` or `chooseImage`, else the configured one. */
  private chosen: string | undefined;

  get image(): string {
    return this.chosen ?? this.opts.image;
  }

  /** The image's `Id` as the engine has it now (a rebuilt image has a new one); null when it cannot say. */
  async imageId(): Promise<string | null> {
    try {
      const info = (await (await docker()).getImage(this.image).inspect()) as { Id?: string };
      return info.Id ?? null;
    } catch {
      return null;
    }
  }

  imageReport: ImageReport | undefined;

  async ensureImage(): Promise<void> {
    const onLine = (l: string) => this.opts.log?.debug(l);
    if (!this.opts.config) return ensureImage(this.opts.image, { onLine });
    const { tag, plan } = await ensurePlannedImage(this.opts.config, {
      env: this.opts.env,
      onLine,
      onBuild: (l) => this.opts.log?.info(l),
    });
    this.chosen = tag;
    this.imageReport = { image: tag, why: plan.source.why, notes: plan.notes };
  }

  /** Which image the configuration names now and whether it is there, building nothing (`chalk doctor`). */
  async chooseImage(): Promise<ImageChoice | null> {
    if (!this.opts.config) return null;
    const choice = await currentImage(this.opts.config, this.opts.env);
    if (choice.tag && choice.present) this.chosen = choice.tag;
    return choice;
  }

  /** The image id the last mirror call found, for `open` (an image rebuilt since has no mirror: open then says so). */
  private mirrorFrom: { image: string; id: string } | undefined;

  /** The current image's id for the mirror calls; a UserError when the engine does not have the image. */
  private async mirrorImageId(): Promise<string> {
    const id = await this.imageId();
    if (!id) throw new UserError(`sandbox image '${this.image}' not found locally; run: chalk sandbox build`);
    this.mirrorFrom = { image: this.image, id };
    return id;
  }

  mirrors(): Promise<{ repo: string; base: string }[]> {
    return mirrorsOn(this.mirrorImageId());
  }

  async makeMirror(o: {
    repo: MirrorRepo;
    base: string;
    fill: (gitDir: string) => Promise<void>;
    onBuild?: (line: string) => void;
  }): Promise<{ built: boolean }> {
    const { built } = await makeMirror({
      ...o,
      imageId: await this.mirrorImageId(),
      env: this.opts.env,
      onLine: (l) => this.opts.log?.debug(l),
    });
    return { built };
  }

  removeMirrors(o: { repo: MirrorRepo; all: boolean }): Promise<number> {
    return this.imageId().then((imageId) => removeMirrors({ ...o, imageId }));
  }

  /** The image a sandbox of `spec` starts from: its mirror's, when it has one. */
  private async imageFor(spec: SandboxSpec): Promise<string> {
    if (!spec.mirror) return this.image;
    const id =
      this.mirrorFrom?.image === this.image ? this.mirrorFrom.id : await this.mirrorImageId().catch(() => 'missing');
    return mirrorTag(spec.mirror.repo.key, id, spec.mirror.base);
  }

  async removeLeftovers(filter: { repo: string; ticket?: string; kind?: string }): Promise<string[]> {
    const d = await docker();
    const [found, nets] = await Promise.all([
      d.listContainers({ all: true, filters: { label: labelFilter(filter) } }),
      d.listNetworks({ filters: { label: labelFilter(filter) } }),
    ]);
    const removed: string[] = [];
    for (const c of found) {
      try {
        await d.getContainer(c.Id).remove({ force: true });
        removed.push((c.Names[0] ?? c.Id).replace(/^\//, ''));
      } catch (err) {
        if (statusOf(err) !== 404 && statusOf(err) !== 409) throw err;
      }
    }
    // Their networks too (a killed run's; the egress container is disconnected first).
    for (const n of nets) await removeNetwork(d, n.Name).catch(() => undefined);
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
  /** What the repository asked for when its CPUs were held to the ceiling. */
  private cpusHeldFrom: string | null = null;

  /**
   * CPUs per sandbox: the setting, or for `auto` half of what the engine
   * reports (4 when it cannot say); a repository's setting no more than its ceiling.
   */
  private cpuLimit(): Promise<number> {
    this.cpus ??= (async () => {
      const set = this.opts.cpus ?? 'auto';
      const ceiling = this.opts.cpusCeiling;
      const auto =
        set === 'auto' || ceiling === 'auto'
          ? await docker()
              .then((d) => d.info())
              .then((info: { NCPU?: number }) => autoCpus(info.NCPU ?? 4))
              .catch(() => autoCpus(4))
          : 0;
      const value = set === 'auto' ? auto : set;
      if (ceiling === undefined) return value;
      const most = ceiling === 'auto' ? auto : ceiling;
      if (value <= most) return value;
      this.cpusHeldFrom = String(set);
      return most;
    })();
    return this.cpus;
  }

  private async shape(env: SandboxEnv, net: RunEgress, tmpfsSize: string): Promise<ContainerShape> {
    const runtime = await this.runtimeName();
    return {
      env: env.container,
      network: { name: net.network, dns: net.proxyAddress },
      ...(runtime ? { runtime } : {}),
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

  private gateway: Promise<string | undefined> | undefined;

  /** The default bridge's gateway: the host as a container on the engine reaches it. */
  private bridgeGateway(): Promise<string | undefined> {
    this.gateway ??= docker()
      .then((d) => d.getNetwork('bridge').inspect())
      .then((n: { IPAM?: { Config?: { Gateway?: string }[] } }) => n.IPAM?.Config?.find((c) => c.Gateway)?.Gateway)
      .catch(() => undefined);
    return this.gateway;
  }

  /** The telemetry the sandbox gets and the destination its egress allows for it. */
  private async telemetry(): Promise<{ telemetry: TelemetrySettings | null; allow: string }> {
    const t = this.opts.telemetry;
    if (!t || t.endpoint === '') return { telemetry: null, allow: '' };
    return telemetryRoute(t, () => this.bridgeGateway());
  }

  /** The run's network and its way out through the egress container; a failure is one line. */
  private async openEgress(spec: SandboxIdentity, telemetryAllow: string): Promise<RunEgress> {
    const { mode, allow } = this.policy;
    const policy = { mode, allow: [allow, telemetryAllow].filter((a) => a !== '').join(',') };
    try {
      return await openRunEgress(this.egressEngine, spec, { policy, env: this.hostEnv });
    } catch (err) {
      if (err instanceof UserError) throw err;
      throw new UserError(`could not give sandbox ${containerName(spec)} its network: ${describeDockerError(err)}`);
    }
  }

  /** The networks `prepare` started, by container name, until `open` takes one. */
  private readonly prepared = new Map<string, Promise<PreparedNetwork>>();

  /**
   * What a sandbox needs before its container: what a killed run of the ticket left removed
   * (only its own kind: opening a `distill` sandbox leaves the ticket's run sandbox alone), its
   * own network and its way out through the egress container.
   */
  private async network(spec: SandboxIdentity): Promise<PreparedNetwork> {
    const d = await docker();
    await Promise.all([
      this.removeLeftovers({ repo: spec.repo, ticket: spec.ticket, kind: spec.suffix || 'run' }),
      d
        .getContainer(containerName(spec))
        .remove({ force: true })
        .catch(() => undefined),
    ]);
    if (this.opts.handleSignals !== false) installSignalHandlers();
    await this.runtimeName();
    const { telemetry, allow } = await this.telemetry();
    return { net: await this.openEgress(spec, allow), telemetry };
  }

  /**
   * Starts the sandbox's network and way out (`network`) while the caller's host work goes on;
   * `open` of the same sandbox takes them. The function returned gives them up when no `open` follows.
   */
  prepare(spec: SandboxIdentity): () => Promise<void> {
    const name = containerName(spec);
    const ready = this.network(spec);
    ready.catch(() => undefined);
    this.prepared.set(name, ready);
    return async () => {
      if (this.prepared.get(name) !== ready) return;
      this.prepared.delete(name);
      await (await ready.catch(() => null))?.net.close().catch(() => undefined);
    };
  }

  async open(spec: SandboxSpec): Promise<SandboxSession> {
    const d = await docker();
    const name = containerName(spec);
    const ready = this.prepared.get(name);
    this.prepared.delete(name);
    const { net, telemetry } = await (ready ?? this.network(spec));
    const env = sandboxEnv(this.hostEnv, telemetry, net, spec.env);
    const image = await this.imageFor(spec);
    let container: Awaited<ReturnType<typeof d.createContainer>>;
    try {
      container = await d.createContainer(
        runContainerOptions({
          name,
          image,
          spec,
          shape: await this.shape(env, net, this.opts.tmpfsSize),
        }),
      );
    } catch (err) {
      await net.close().catch(() => undefined);
      if (statusOf(err) === 404 && spec.mirror) {
        throw new UserError(
          `this repository's sandbox mirror ${image} is gone from the engine (removed meanwhile?); run again, which makes it anew`,
        );
      }
      if (statusOf(err) === 404) {
        throw new UserError(`sandbox image '${this.image}' not found locally; run: chalk sandbox build`);
      }
      throw new UserError(`could not create sandbox ${name}: ${describeDockerError(err)}`);
    }
    const session = new DockerSandboxSession(name, spec, container, {
      agentEnv: env.agent,
      maxOutputBytes: this.maxOutputBytes,
      image: this.image,
      egress: net,
      egressSummary: egressSummary(this.policy),
      user: sandboxUser(),
      memoryMb: this.memoryMb,
      ...(this.opts.runtime === 'runsc' ? { topInside: true } : {}),
      onStop: (s) => untrack(s),
    });
    track(session);
    try {
      await container.start();
      await session.recordOwnProcesses();
      // The egress daemon learnt the run meanwhile (openRunEgress); nothing has run in the sandbox yet.
      await net.ready().catch((err: unknown) => {
        throw new UserError(`could not give sandbox ${name} its network: ${describeDockerError(err)}`);
      });
    } catch (err) {
      await session.stop().catch(() => undefined);
      if (err instanceof UserError) throw err;
      throw new UserError(`could not start sandbox ${name}: ${describeDockerError(err)}`);
    }
    return session;
  }

  closeAll(): Promise<void> {
    return closeAllSessions();
  }

  private probes = 0;

  /**
   * One command of the agent CLI in a throwaway container of the image (no clone, no mounts), on
   * a network of its own like any sandbox's, with the gateway and a token, never the key; removed
   * afterwards.
   */
  runOnce(argv: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
    // The probe is the agent CLI itself: it gets the agent's environment.
    return this.oneShot(argv.map(quote).join(' '), { ...opts, agent: true });
  }

  /**
   * Where each program is on the image's PATH (`command -v`), null when it is not there: one
   * throwaway container, with the container's environment only (never the agent's), as the
   * rubric and setup commands get it.
   */
  async lookup(programs: readonly string[]): Promise<Map<string, string | null>> {
    const script = programs
      .map((p) => `printf '%s\\t%s\\n' ${quote(p)} "$(command -v ${quote(p)} || true)"`)
      .join('; ');
    const r = await this.oneShot(`${script}`, { timeoutMs: 60_000, agent: false });
    if (r.exitCode !== 0)
      throw new Error(`the lookup in ${this.image} exited ${r.exitCode}: ${r.stderr.trim().split('\n')[0] ?? ''}`);
    const found = new Map<string, string | null>(programs.map((p) => [p, null]));
    for (const line of r.stdout.split('\n')) {
      const [name, path] = line.split('\t');
      if (name && found.has(name)) found.set(name, path ? path : null);
    }
    return found;
  }

  /** A throwaway container on a network of its own (every container's only way out is the egress proxy). */
  private async oneShot(
    command: string,
    opts: { stdin?: string; timeoutMs?: number; agent: boolean },
  ): Promise<ExecResult> {
    const d = await docker();
    const spec = {
      repo: 'oneshot',
      ticket: `P${process.pid}-${++this.probes}`,
      runId: '',
      suffix: '',
    } as SandboxSpec;
    if (this.opts.handleSignals !== false) installSignalHandlers();
    const { telemetry, allow } = await this.telemetry();
    const net = await this.openEgress(spec, allow);
    const env = sandboxEnv(this.hostEnv, telemetry, net);
    let container: Awaited<ReturnType<typeof d.createContainer>> | undefined;
    const session = {
      stop: async () => {
        await container?.remove({ force: true }).catch(() => undefined);
        await net.close().catch(() => undefined);
      },
    };
    track(session);
    try {
      container = await d.createContainer(
        oneShotContainerOptions({ image: this.image, shape: await this.shape(env, net, '64m') }),
      );
      await container.start();
      await net.ready();
      // The agent CLI's call is bracketed at the gateway: its token works only inside.
      if (opts.agent) await net.beginCall(ONESHOT_CAP_USD);
      try {
        // The agent CLI starts as the agent does (asAgent), with the agent's environment; anything else, as the sandbox user with none.
        return await execInContainer(container, opts.agent ? asAgent(command, sandboxUser()) : command, {
          ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
          ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
          env: opts.agent ? env.agent : {},
          defaultCwd: '/work',
          maxOutputBytes: this.maxOutputBytes,
          user: opts.agent ? '0:0' : sandboxUser(),
        });
      } finally {
        if (opts.agent) await net.endCall().catch(() => null);
      }
    } finally {
      await session.stop();
      untrack(session);
    }
  }
}
