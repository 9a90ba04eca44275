import { type Host, hostPort, parseHost } from './names.js';

/**
 * The egress rule one run's sandbox is held to, decided per connection: the baseline
 * (`registries`, `off`, `open`) plus the hosts the person allows. Pure; the egress container's
 * daemon asks it for every request Squid sees, and the host uses it to check the settings.
 */

export const EGRESS_MODES = ['registries', 'off', 'open'] as const;
export type EgressMode = (typeof EGRESS_MODES)[number];

/** The package registries every run may reach by default, by ecosystem (what `chalk egress` shows). */
export const REGISTRIES: readonly { name: string; hosts: readonly string[] }[] = [
  { name: 'npm', hosts: ['registry.npmjs.org:443'] },
  { name: 'PyPI', hosts: ['pypi.org:443', 'files.pythonhosted.org:443'] },
  { name: 'crates.io', hosts: ['crates.io:443', 'index.crates.io:443', 'static.crates.io:443'] },
  { name: 'Go modules', hosts: ['proxy.golang.org:443', 'sum.golang.org:443'] },
  {
    name: 'Debian',
    hosts: ['deb.debian.org:80', 'deb.debian.org:443', 'security.debian.org:80', 'security.debian.org:443'],
  },
  {
    name: 'Ubuntu',
    hosts: [
      'archive.ubuntu.com:80',
      'archive.ubuntu.com:443',
      'security.ubuntu.com:80',
      'security.ubuntu.com:443',
      'ports.ubuntu.com:80',
      'ports.ubuntu.com:443',
    ],
  },
  { name: 'RubyGems', hosts: ['rubygems.org:443', 'index.rubygems.org:443'] },
  { name: 'Maven Central', hosts: ['repo.maven.apache.org:443', 'repo1.maven.org:443'] },
  { name: 'NuGet', hosts: ['api.nuget.org:443'] },
];

/** One allowed destination: a host (or every name under `*.suffix`) on some ports. */
export interface AllowEntry {
  host: Host;
  /** `*.example.com`: every name under example.com, not example.com itself. */
  subdomains: boolean;
  /** The ports allowed; an entry written without one allows 443 and 80. */
  ports: readonly number[];
}

export interface Policy {
  mode: EgressMode;
  allow: readonly AllowEntry[];
}

const DEFAULT_PORTS = [443, 80] as const;

/** One `host[:port]` entry; a one-line reason when it is not one. */
export function parseAllowEntry(text: string): AllowEntry | string {
  const t = text.trim();
  const m = /^(\[[^\]]*\]|[^:]*)(?::([0-9]{1,5}))?$/.exec(t);
  if (!m) return `'${t}' is not host[:port]`;
  const hostText = m[1] ?? '';
  const subdomains = hostText.startsWith('*.');
  const host = parseHost(subdomains ? hostText.slice(2) : hostText);
  if (!host) return `'${t}': '${hostText}' is not a host name or address`;
  if (subdomains && host.kind !== 'name') return `'${t}': only a name can have subdomains`;
  if ((host.kind === 'ipv4' && /^(?:127|0)\./.test(host.host)) || (host.kind === 'ipv6' && /^::1?$/.test(host.host))) {
    return `'${t}': a loopback address is the egress proxy's own; name the host by its bridge address instead`;
  }
  if (m[2] === undefined) return { host, subdomains, ports: DEFAULT_PORTS };
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `'${t}': port ${m[2]} is not 1 to 65535`;
  return { host, subdomains, ports: [port] };
}

/** A comma list of entries: the entries and every entry's error. */
export function parseAllowList(text: string): { entries: AllowEntry[]; errors: string[] } {
  const entries: AllowEntry[] = [];
  const errors: string[] = [];
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const e = parseAllowEntry(part);
    if (typeof e === 'string') errors.push(e);
    else entries.push(e);
  }
  return { entries, errors };
}

/** The registries as allow entries (`registries` mode's baseline). */
export const REGISTRY_ENTRIES: readonly AllowEntry[] = parseAllowList(
  REGISTRIES.flatMap((r) => r.hosts).join(','),
).entries;

export type Decision =
  | { verdict: 'allow' }
  /** Allowed because the run names this very address: the proxy's private-address rule steps aside. */
  | { verdict: 'allow-address' }
  | { verdict: 'deny'; reason: string };

const matches = (e: AllowEntry, h: Host, port: number) =>
  e.ports.includes(port) &&
  e.host.kind === h.kind &&
  (e.subdomains ? h.host.endsWith(`.${e.host.host}`) : e.host.host === h.host);

/** What the person would write to allow it, in the words of the reason. */
export const allowLine = (target: string) => `CHALK_EGRESS_ALLOW=${target}`;

/** Whether a sandbox may connect to `rawHost:port`, and why not in words a model can act on. */
export function decide(policy: Policy, rawHost: string, port: number): Decision {
  const h = parseHost(rawHost);
  if (!h) return { verdict: 'deny', reason: `'${rawHost.slice(0, 100)}' is not a plain host name or address` };
  const target = hostPort(h, port);
  if (policy.allow.some((e) => matches(e, h, port))) {
    return h.kind === 'name' ? { verdict: 'allow' } : { verdict: 'allow-address' };
  }
  if (policy.mode === 'open') return { verdict: 'allow' };
  if (policy.mode === 'registries' && h.kind === 'name' && REGISTRY_ENTRIES.some((e) => matches(e, h, port))) {
    return { verdict: 'allow' };
  }
  const what = h.kind === 'name' ? 'not on' : 'an address, not a name on';
  return {
    verdict: 'deny',
    reason: `${target} is ${what} this run's allowlist (CHALK_EGRESS=${policy.mode}); the person running Chalk can allow it with ${allowLine(target)}. Do not retry.`,
  };
}

/**
 * Whether a TLS ClientHello's server name fits the CONNECT it came through: the same name
 * (after normalising both), and none at all for an address. Null when it fits.
 */
export function sniMismatch(connectHost: string, sni: string): string | null {
  const h = parseHost(connectHost);
  if (!h) return `'${connectHost.slice(0, 100)}' is not a plain host name or address`;
  if (h.kind !== 'name')
    return sni === '' ? null : `a TLS server name (${sni.slice(0, 100)}) on a connection to an address`;
  if (sni === '') return `TLS to ${h.host} without a server name (SNI)`;
  const s = parseHost(sni);
  if (s?.kind === 'name' && s.host === h.host) return null;
  return `the TLS server name ${sni.slice(0, 100)} differs from the CONNECT name ${h.host}`;
}
