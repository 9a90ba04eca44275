import { randomBytes } from 'node:crypto';
import type Dockerode from 'dockerode';
import type { SandboxSpec } from '../../../core/plugin.js';
import { docker, statusOf } from '../docker.js';
import { rewriteLoopback } from '../env.js';
import { labelsFor } from '../names.js';
import { EgressChannel } from './channel.js';
import { EGRESS_PORTS } from './daemon/layout.js';
import type { EgressMode } from './daemon/policy.js';
import type { CallUsage, Credential, Refusal } from './daemon/runs.js';
import { EGRESS_LABEL, type EgressEngine } from './engine.js';

/**
 * One sandbox's network: internal (no route out), with no address of the host on it (the bridge
 * gets none: `inhibit_ipv4`), so the sandbox can reach nothing but the egress container, which
 * is attached to it for the run. The sandbox is given the proxy and the gateway by address (it
 * has no resolver of its own: its DNS server is the egress container's address, where nothing
 * answers), and a fresh token the daemon knows only while this run's control connection lasts.
 */

export interface EgressPolicy {
  mode: EgressMode;
  /** `host[:port],...` on top of the mode (the person's and the trusted proposals). */
  allow: string;
}

export interface RunEgress {
  network: string;
  /** The egress container's address on the run's network. */
  proxyAddress: string;
  /** The container's environment entries: the proxy for every tool, and no proxy for the gateway. */
  containerEnv: string[];
  /** The agent exec's: the gateway and the run's token (never a real credential). */
  agentEnv: Record<string, string>;
  /**
   * Resolves once the egress daemon knows the run (its policy and token), which happens while
   * the caller makes and starts its container; rejects when it could not. Nothing may run in
   * the sandbox before.
   */
  ready(): Promise<void>;
  beginCall(capUsd: number): Promise<void>;
  endCall(): Promise<CallUsage | null>;
  refusals(): Promise<{ entries: Refusal[]; dropped: number }>;
  close(): Promise<void>;
}

const clean = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '-');

export function networkName(spec: Pick<SandboxSpec, 'repo' | 'ticket' | 'suffix'>): string {
  return clean(`chalk-net-${spec.repo}-${spec.ticket}${spec.suffix ? `-${spec.suffix}` : ''}`);
}

/** The host's credentials for the gateway, by the names the `claude` CLI reads. */
export function credentialOf(env: NodeJS.ProcessEnv): Credential {
  const c: Credential = {};
  if (env.ANTHROPIC_API_KEY) c.apiKey = env.ANTHROPIC_API_KEY;
  if (env.ANTHROPIC_AUTH_TOKEN) c.authToken = env.ANTHROPIC_AUTH_TOKEN;
  if (env.CLAUDE_CODE_OAUTH_TOKEN) c.oauthToken = env.CLAUDE_CODE_OAUTH_TOKEN;
  return c;
}

/** The model endpoint as the egress container reaches it: the host's ANTHROPIC_BASE_URL, else Anthropic's API. */
export function upstreamOf(env: NodeJS.ProcessEnv): string {
  const base = env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com';
  return rewriteLoopback(base).url;
}

function gatewayProxy(env: NodeJS.ProcessEnv): { http?: string; https?: string; noProxy?: string } {
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  const http = pick('HTTP_PROXY', 'http_proxy');
  const https = pick('HTTPS_PROXY', 'https_proxy');
  const noProxy = pick('NO_PROXY', 'no_proxy');
  return {
    ...(http ? { http: rewriteLoopback(http).url } : {}),
    ...(https ? { https: rewriteLoopback(https).url } : {}),
    ...(noProxy ? { noProxy } : {}),
  };
}

/** Removes a network of this name, the egress container (and anything else) disconnected first. */
export async function removeNetwork(d: Dockerode, name: string): Promise<void> {
  const net = d.getNetwork(name);
  let info: { Containers?: Record<string, unknown> };
  try {
    info = await net.inspect();
  } catch (err) {
    if (statusOf(err) === 404) return;
    throw err;
  }
  for (const id of Object.keys(info.Containers ?? {})) {
    await net.disconnect({ Container: id, Force: true }).catch(() => undefined);
  }
  await net.remove().catch((err: unknown) => {
    if (statusOf(err) !== 404) throw err;
  });
}

export function proxyEnv(address: string): string[] {
  const proxy = `http://${address}:${EGRESS_PORTS.proxy}`;
  const direct = `${address},localhost,127.0.0.1,::1`;
  return ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']
    .map((k) => `${k}=${proxy}`)
    .concat([`NO_PROXY=${direct}`, `no_proxy=${direct}`]);
}

export async function openRunEgress(
  engine: EgressEngine,
  spec: Pick<SandboxSpec, 'repo' | 'ticket' | 'runId' | 'suffix'>,
  o: { policy: EgressPolicy; env: NodeJS.ProcessEnv },
): Promise<RunEgress> {
  const d = await docker();
  const name = networkName(spec);
  await removeNetwork(d, name);
  const egressReady = engine.container();
  // Awaited inside the try below; a failure meanwhile is not an unhandled one.
  egressReady.catch(() => undefined);
  await d.createNetwork({
    Name: name,
    Driver: 'bridge',
    Internal: true,
    CheckDuplicate: true,
    EnableIPv6: false,
    Options: { 'com.docker.network.bridge.inhibit_ipv4': 'true' },
    Labels: { ...labelsFor(spec), [EGRESS_LABEL]: 'run' },
  });
  let registered: Promise<EgressChannel> | undefined;
  try {
    // The run's network goes again when the egress container cannot start (below).
    const egress = await egressReady;
    const net = d.getNetwork(name);
    await net.connect({ Container: egress.id });
    const info = (await net.inspect()) as {
      IPAM?: { Config?: { Subnet?: string }[] };
      Containers?: Record<string, { IPv4Address?: string }>;
    };
    const subnet = info.IPAM?.Config?.find((c) => c.Subnet && !c.Subnet.includes(':'))?.Subnet ?? '';
    const proxyAddress = (info.Containers?.[egress.id]?.IPv4Address ?? '').split('/')[0] ?? '';
    if (subnet === '' || proxyAddress === '') throw new Error(`network ${name} has no IPv4 subnet or address`);
    const token = `chalk-run-${randomBytes(32).toString('base64url')}`;
    // The run is made known to the daemon while the caller starts its container (ready()).
    registered = (async () => {
      const channel = await EgressChannel.open(egress);
      try {
        await channel.request({
          op: 'open',
          run: {
            subnet,
            mode: o.policy.mode,
            allow: o.policy.allow,
            token,
            credential: credentialOf(o.env),
            upstream: upstreamOf(o.env),
            proxy: gatewayProxy(o.env),
          },
        });
      } catch (err) {
        await channel.close();
        throw err;
      }
      return channel;
    })();
    // Awaited by ready() and every request; a failure meanwhile is not an unhandled one.
    registered.catch(() => undefined);
    const ch = registered;
    return {
      network: name,
      proxyAddress,
      containerEnv: proxyEnv(proxyAddress),
      agentEnv: {
        ANTHROPIC_BASE_URL: `http://${proxyAddress}:${EGRESS_PORTS.gateway}`,
        ANTHROPIC_API_KEY: token,
      },
      ready: async () => {
        await ch;
      },
      beginCall: async (capUsd) => {
        await (await ch).request({ op: 'call', capUsd });
      },
      endCall: async () => (await (await ch).request<{ usage: CallUsage | null }>({ op: 'end' })).usage,
      refusals: async () => (await ch).request<{ entries: Refusal[]; dropped: number }>({ op: 'refusals' }),
      close: async () => {
        await (await ch.catch(() => null))?.close();
        await removeNetwork(d, name);
      },
    };
  } catch (err) {
    await (await registered?.catch(() => null))?.close();
    await removeNetwork(d, name).catch(() => undefined);
    throw err;
  }
}
