import { EGRESS_PORTS } from './layout.js';
import { decide, sniMismatch } from './policy.js';
import type { Runs } from './runs.js';

/**
 * Squid's external ACL protocol (concurrent form), as the daemon answers it: each line is
 * `channel localport source method host port sni`, each field percent-encoded by Squid and
 * `-` when empty; the answer is `channel OK [tag=address]` or `channel ERR message="..."`. The
 * front port's questions are the run's policy; the SNI port's are whether the ClientHello's
 * server name is the CONNECT name. A source no run owns is refused.
 */

/** The daemon's own readiness probe asks for this name from loopback; nothing else is ever allowed there. */
export const PROBE_HOST = 'chalk-probe.invalid';

const field = (f: string | undefined) => {
  if (f === undefined || f === '-') return '';
  try {
    return decodeURIComponent(f);
  } catch {
    return f;
  }
};

/** Squid reads the message as a quoted string: no quote, backslash or line break in it. */
const quoted = (s: string) => `"${s.replace(/["\\\r\n]/g, ' ')}"`;

export function answer(runs: Runs, line: string): string {
  const parts = line.trim().split(' ');
  const channel = /^[0-9]+$/.test(parts[0] ?? '') ? (parts[0] as string) : '0';
  const [, lp, src, , host, portText, sni] = parts.map((p, i) => (i === 0 ? p : field(p)));
  const port = Number(portText);
  const deny = (why: string) => `${channel} ERR message=${quoted(why)}`;
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) return deny('no host and port to check');
  if (src === '127.0.0.1' && host === PROBE_HOST && port === 443 && Number(lp) === EGRESS_PORTS.proxy)
    return `${channel} OK`;
  const run = runs.bySource(src ?? '');
  if (!run) return deny('the request comes from no sandbox this proxy serves');
  if (Number(lp) === EGRESS_PORTS.sni) {
    const mismatch = sniMismatch(host, sni ?? '');
    return mismatch ? deny(mismatch) : `${channel} OK`;
  }
  const d = decide(run.policy, host, port);
  if (d.verdict === 'deny') return deny(d.reason);
  return d.verdict === 'allow-address' ? `${channel} OK tag=address` : `${channel} OK`;
}
