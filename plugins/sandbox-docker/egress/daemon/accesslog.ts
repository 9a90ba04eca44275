import { hostPort, parseHost } from './names.js';
import { allowLine, decide, parseAllowEntry, sniMismatch } from './policy.js';
import type { RefusalKind, Runs } from './runs.js';

/**
 * Squid's access log as the daemon reads it (the two formats squid-conf.ts writes): each line
 * that records a refusal is counted against the run its source belongs to. Squid writes the log,
 * but what it records (host names, server names) came from a sandbox: each line is capped, each
 * field checked, and a host that is no host is shown only in safe characters.
 */

/** The longest log line read; the rest of a longer one is ignored. */
export const LINE_CAP = 4096;

const shown = (logged: string) => {
  let raw = logged;
  try {
    // Squid writes an IPv6 address's brackets percent-encoded.
    raw = decodeURIComponent(logged);
  } catch {}
  const h = parseHost(raw);
  return h ? h.host : raw.replace(/[^A-Za-z0-9.:_-]/g, '?').slice(0, 100) || '?';
};

const PRIVATE = (target: string) =>
  `${target} resolves to a loopback, private or link-local address, which the egress proxy refuses; the person running Chalk can allow an address itself with CHALK_EGRESS_ALLOW=<address>:<port>. Do not retry.`;
const NOT_TLS =
  'what went through the tunnel is not TLS: the egress proxy carries only TLS through CONNECT (use https, not ssh or raw TCP). Do not retry.';

/** Counts the refusal a log line records, if it records one; returns whether it did. */
export function readLogLine(runs: Runs, raw: string): boolean {
  const line = raw.length > LINE_CAP ? raw.slice(0, LINE_CAP) : raw;
  const front = /^([0-9]+)\.[0-9]+ F (\S+) (\S+) ([0-9]+|-) ([0-9]+) (\S+) (\S+) (\S+)$/.exec(line);
  if (front) {
    const [, ts, src = '', , portText, status, , err = '', host = ''] = front;
    if (status !== '403') return false;
    const run = runs.bySource(src);
    const port = Number(portText);
    if (!run || !Number.isInteger(port)) return false;
    const target = hostPort(shown(host), port);
    let reason = 'refused by the egress proxy. Do not retry.';
    let kind: RefusalKind = 'policy';
    if (err === 'ERR_CHALK_PRIVATE') {
      reason = PRIVATE(target);
      kind = 'private';
    } else if (err === 'ERR_CHALK_EGRESS') {
      const d = decide(run.policy, shown(host), port);
      reason = d.verdict === 'deny' ? d.reason : `${target} was refused; ${allowLine(target)} allows it`;
      // What no allow entry can name (the proxy's own loopback) is not the person's to allow.
      if (typeof parseAllowEntry(target) === 'string') kind = 'loopback';
    }
    run.refused(shown(host), port, kind, reason, Number(ts));
    return true;
  }
  const sni = /^([0-9]+)\.[0-9]+ S (\S+) (\S+) ([0-9]+|-) ([0-9]+) (\S+) (\S+) (\S+) (\S+) ?(.*)$/.exec(line);
  if (!sni) return false;
  const [, ts, src = '', , portText, , , err = '', mode = '', host = '', serverName = ''] = sni;
  const run = runs.bySource(src);
  const port = Number(portText);
  if (!run || !Number.isInteger(port)) return false;
  const name = serverName === '-' ? '' : serverName.slice(0, 255);
  if (mode === 'terminate') {
    const why = sniMismatch(host, name) ?? 'refused at the TLS handshake';
    run.refused(shown(host), port, 'sni', `${why}. Do not retry.`, Number(ts));
    return true;
  }
  if (err === 'ERR_PROTOCOL_UNKNOWN') {
    run.refused(shown(host), port, 'protocol', NOT_TLS, Number(ts));
    return true;
  }
  return false;
}
