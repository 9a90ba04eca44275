import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Host names as the egress policy compares them. A name is lower case, without a trailing dot,
 * in IDNA A-labels; an address is in its one canonical form. What is neither (a percent sign, an
 * underscore, an empty label, a number a URL parser would read as an address: 127.1, 0x7f.1,
 * 2130706433, 010.0.0.1) is no host at all, so no spelling of a host can pass for another.
 * Runs in the egress container (Node 18): node built-ins only.
 */
export type Host = { kind: 'name' | 'ipv4' | 'ipv6'; host: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DOTTED = /^(?:0|[1-9][0-9]{0,2})(?:\.(?:0|[1-9][0-9]{0,2})){3}$/;
/** A last label a URL parser reads as a number, which makes the whole host an IPv4 address. */
const NUMERIC = /^(?:[0-9]+|0x[0-9a-f]*)$/;

export function parseHost(raw: string): Host | null {
  if (raw === '' || raw.length > 255) return null;
  const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  // Every IPv6 address has a colon, and no name or IPv4 address has one. Asking isIPv6 only
  // then is the same answer without its cost: its first call compiles a regular expression that
  // takes longer than all the rest of `chalk status` (reading CHALK_EGRESS_ALLOW checks each host).
  if (bare.includes(':') && isIPv6(bare)) {
    // The URL parser writes an IPv6 address in its one canonical form.
    return { kind: 'ipv6', host: new URL(`http://[${bare}]/`).hostname.slice(1, -1) };
  }
  if (bare !== raw) return null;
  const undotted = raw.endsWith('.') ? raw.slice(0, -1) : raw;
  if (DOTTED.test(undotted)) return isIPv4(undotted) ? { kind: 'ipv4', host: undotted } : null;
  const ascii = /[^\x21-\x7e]/.test(undotted) ? domainToASCII(undotted) : undotted;
  const host = ascii.toLowerCase();
  if (host === '' || host.length > 253) return null;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return null;
  if (NUMERIC.test(labels[labels.length - 1] ?? '')) return null;
  return { kind: 'name', host };
}

/** `host:port` as the person writes it and the log shows it (an IPv6 address in brackets). */
export function hostPort(h: Host | string, port: number): string {
  const host = typeof h === 'string' ? h : h.host;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Addresses the proxy refuses to connect to, whatever name led there, unless the run allows the
 * address itself: "this network", private, shared (CGNAT), loopback, link-local (cloud metadata
 * among them), IETF protocol assignments, benchmarking, multicast and reserved; for IPv6 the
 * unspecified and loopback addresses, unique-local, link-local, multicast and IPv4-mapped ones.
 * The proxy's own configuration is written from this list (squid-conf.ts).
 */
export const REFUSED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  '::ffff:0:0/96',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
] as const;
