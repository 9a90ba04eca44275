import { createHash } from 'node:crypto';
import type Dockerode from 'dockerode';
import { type Log, UserError } from '../../../core/plugin.js';
import { describeDockerError, docker, statusOf } from '../docker.js';
import { HOST_ALIAS, rewriteLoopback } from '../env.js';
import { sandboxLock } from '../locks.js';
import { EgressChannel } from './channel.js';
import { UPSTREAM_ENV } from './daemon/layout.js';
import { parseUpstream } from './daemon/squid-conf.js';
import { ensureEgressImage } from './image.js';

/**
 * The egress container: one per engine and configuration, long-lived, shared by every run on
 * that engine. It sits on `chalk-egress`, a bridge network with a way out, and is attached to
 * each run's own network while the run lasts (run-net.ts). Its name carries a hash of its
 * image and its upstream proxy, so a changed daemon or proxy setting starts a new one beside
 * the old; one of an older image is removed once no run network holds it.
 */

export const EGRESS_NETWORK = 'chalk-egress';
/** `proxy` on the egress container, `run` on a run's network, `out` on EGRESS_NETWORK. */
export const EGRESS_LABEL = 'chalk.egress';

const MIB = 1024 * 1024;
const READY_DEADLINE_MS = 30_000;

/** The upstream proxy the host's environment names (HTTPS_PROXY first), as the egress container reaches it. */
export function upstreamProxy(env: NodeJS.ProcessEnv): string {
  const raw = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy || '';
  if (raw === '') return '';
  const { url } = rewriteLoopback(raw);
  const parsed = parseUpstream(url);
  if (typeof parsed === 'string') {
    throw new UserError(`the upstream proxy in HTTPS_PROXY/HTTP_PROXY ${parsed}; set an http:// proxy or unset it`);
  }
  return url;
}

function egressOptions(
  name: string,
  image: string,
  upstream: string,
  network: string,
): Dockerode.ContainerCreateOptions {
  return {
    name,
    Image: image,
    Env: upstream === '' ? [] : [`${UPSTREAM_ENV}=${upstream}`],
    Labels: { [EGRESS_LABEL]: 'proxy' },
    HostConfig: {
      // By id: the name may be ambiguous (ensureNetwork).
      NetworkMode: network,
      Init: true,
      ReadonlyRootfs: true,
      Tmpfs: { '/run/chalk-egress': 'rw,nosuid,nodev,mode=0755,size=16m', '/tmp': 'rw,nosuid,nodev,size=64m' },
      // Root only to start: the daemon and Squid each drop to their own user.
      CapDrop: ['ALL'],
      CapAdd: ['CHOWN', 'FOWNER', 'SETUID', 'SETGID', 'NET_BIND_SERVICE'],
      SecurityOpt: ['no-new-privileges'],
      ExtraHosts: [`${HOST_ALIAS}:host-gateway`],
      // Attached to every run's network: it must never route between them.
      Sysctls: { 'net.ipv4.ip_forward': '0' },
      Memory: 512 * MIB,
      MemorySwap: 512 * MIB,
      PidsLimit: 512,
    },
  };
}

interface NamedNetwork {
  Id: string;
  Name: string;
  Created?: string;
}

/**
 * Which of the networks called `name` every chalk uses: the engine keys networks by id and lets
 * two creations of one name race (CheckDuplicate is best effort), so two runs starting at once
 * can each make one. The oldest wins (then the lowest id), the same answer for every process
 * that lists them; null when there is none.
 */
export function pickNetwork(found: readonly NamedNetwork[], name: string): NamedNetwork | null {
  const same = found.filter((n) => n.Name === name);
  same.sort((a, b) => (a.Created ?? '').localeCompare(b.Created ?? '') || a.Id.localeCompare(b.Id));
  return same[0] ?? null;
}

async function listNamed(d: Dockerode, name: string): Promise<NamedNetwork[]> {
  // The engine's name filter matches substrings; pickNetwork keeps the exact name.
  return (await d.listNetworks({ filters: { name: [name] } })) as NamedNetwork[];
}

/**
 * The egress container's own network, with a way out, made when missing: its id (by name it is
 * ambiguous once a race made two). The chalks of this machine make it one at a time, under a
 * lock in the state directory (`env`'s); a second one of the name, made by a chalk elsewhere that
 * lost the race, is removed when nothing is attached to it.
 */
export function ensureNetwork(d: Dockerode, name: string = EGRESS_NETWORK, env = process.env): Promise<string> {
  // Callers in one process share the call under way: the engine cannot order two creations of
  // a name (one that started first can show up last), so this process makes it once.
  const going = ensuring.get(name);
  if (going) return going;
  const made = ensureNetworkOnce(d, name, env).finally(() => ensuring.delete(name));
  ensuring.set(name, made);
  return made;
}

/** The ensureNetwork calls under way in this process, by network name. */
const ensuring = new Map<string, Promise<string>>();

/** How long a chalk waits for another of this machine to make the network (a creation takes well under a second). */
const NETWORK_LOCK_MS = 60_000;

async function ensureNetworkOnce(d: Dockerode, name: string, env: NodeJS.ProcessEnv): Promise<string> {
  let found = await listNamed(d, name);
  if (!pickNetwork(found, name)) {
    const release = await sandboxLock('network', name, env, NETWORK_LOCK_MS);
    try {
      // Another chalk may have made it while this one waited.
      found = await listNamed(d, name);
      if (!pickNetwork(found, name)) {
        await d
          .createNetwork({ Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: { [EGRESS_LABEL]: 'out' } })
          .catch((err: unknown) => {
            if (statusOf(err) !== 409) throw err;
          });
        found = await listNamed(d, name);
      }
    } finally {
      release();
    }
  }
  const chosen = pickNetwork(found, name);
  if (!chosen) throw new Error(`network ${name} could not be made`);
  for (const other of found) {
    if (other.Name !== name || other.Id === chosen.Id) continue;
    // The engine refuses while anything is attached: then it stays, unused, until it is free.
    await d
      .getNetwork(other.Id)
      .remove()
      .catch(() => undefined);
  }
  return chosen.Id;
}

async function waitReady(container: Dockerode.Container): Promise<void> {
  const end = Date.now() + READY_DEADLINE_MS;
  let last = '';
  while (Date.now() < end) {
    try {
      const ch = await EgressChannel.open(container);
      try {
        const { ready } = await ch.request<{ ready?: boolean }>({ op: 'ping' });
        if (ready) return;
        last = 'squid is not answering yet';
      } finally {
        await ch.close();
      }
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new UserError(
    `the egress container did not become ready within 30 s (${last}); see: docker logs ${container.id.slice(0, 12)}`,
  );
}

/** Makes the container; one another chalk made first (409) is the same one. */
async function createOnce(d: Dockerode, o: Dockerode.ContainerCreateOptions): Promise<void> {
  try {
    await d.createContainer(o);
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
  }
}

/**
 * Starts the container; one another chalk started first (304) is as good. The engine holds a
 * name before the container is made, so the chalk whose create got 409 may find no container
 * of the name yet (404): it waits until the other's create is done, up to READY_DEADLINE_MS.
 */
async function startOnce(container: Dockerode.Container): Promise<void> {
  const end = Date.now() + READY_DEADLINE_MS;
  for (;;) {
    try {
      await container.start();
      return;
    } catch (err) {
      const status = statusOf(err);
      if (status === 304) return;
      if (status !== 404 || Date.now() > end) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export class EgressEngine {
  private started: Promise<Dockerode.Container> | undefined;

  constructor(private readonly opts: { env: NodeJS.ProcessEnv; log?: Log }) {}

  /** The running, ready egress container, started (and its image built) on first need. */
  container(): Promise<Dockerode.Container> {
    this.started ??= this.start().catch((err: unknown) => {
      this.started = undefined;
      if (err instanceof UserError) throw err;
      throw new UserError(`could not start the egress container: ${describeDockerError(err)}`);
    });
    return this.started;
  }

  private async start(): Promise<Dockerode.Container> {
    const d = await docker();
    const upstream = upstreamProxy(this.opts.env);
    const [image, network] = await Promise.all([
      ensureEgressImage({ env: this.opts.env, onLine: (l) => this.opts.log?.debug(l) }),
      ensureNetwork(d, EGRESS_NETWORK, this.opts.env),
    ]);
    const name = `chalk-egress-${createHash('sha256').update(`${image}\0${upstream}`).digest('hex').slice(0, 12)}`;
    const container = d.getContainer(name);
    let running = false;
    let exists = true;
    let startedAt = 0;
    try {
      const state = (await container.inspect()).State;
      running = state.Running;
      startedAt = Date.parse(state.StartedAt);
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      exists = false;
    }
    if (!running) {
      // One that is there but not running may be another chalk's, made a moment ago and about
      // to start: it is started, never removed (removing it failed that chalk's start). Only
      // one that cannot start (a dead one) is made again.
      if (!exists) await createOnce(d, egressOptions(name, image, upstream, network));
      try {
        await startOnce(container);
      } catch (err) {
        if (!exists) throw err;
        await container.remove({ force: true }).catch(() => undefined);
        await createOnce(d, egressOptions(name, image, upstream, network));
        await startOnce(container);
      }
    }
    // By its id from here on: the engine keys a network's containers by id.
    const byId = d.getContainer((await container.inspect()).Id);
    // One this process started is waited for here (a failure is then its own line); a running
    // one answers a run's first request once it is ready (daemon/ctl.ts).
    // So is one another chalk started moments ago: its daemon may not have made its control
    // socket yet, and a run's first request would find nothing there.
    if (!running || !(Date.now() - startedAt > READY_DEADLINE_MS)) await waitReady(byId);
    void this.removeStale(d, name, image);
    return byId;
  }

  /**
   * Egress containers of an older image (a changed daemon or base) that no run network holds
   * any more. One of this image with another upstream proxy is left alone: another chalk with
   * other settings may be between two of its runs, about to attach it again.
   */
  private async removeStale(d: Dockerode, keep: string, image: string): Promise<void> {
    try {
      const found = await d.listContainers({ all: true, filters: { label: [`${EGRESS_LABEL}=proxy`] } });
      for (const c of found) {
        const name = (c.Names[0] ?? '').replace(/^\//, '');
        const nets = Object.keys(c.NetworkSettings?.Networks ?? {});
        if (name === keep || c.Image === image || nets.some((n) => n !== EGRESS_NETWORK)) continue;
        await d
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
      }
    } catch {
      // Housekeeping only.
    }
  }
}
