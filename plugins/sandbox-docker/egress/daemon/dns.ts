import { createSocket, type Socket } from 'node:dgram';
import type { Runs } from './runs.js';

/**
 * Where a sandbox's DNS queries end: the engine's resolver in the sandbox forwards every name
 * it does not know itself to the egress container (the sandbox's only DNS server), and this
 * answers each with REFUSED at once. Nothing is resolved for a sandbox or sent further: names
 * resolve at the proxy. Each query is counted as a refusal of its run.
 */

export const DNS_REASON =
  'the sandbox has no resolver: names resolve at the egress proxy, so use HTTP(S)_PROXY (set in the sandbox). Do not retry.';

/** The query name of a DNS message, in safe characters; '' when it has none. */
export function queryName(msg: Buffer): string {
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length && labels.length < 64) {
    const len = msg[at] ?? 0;
    if (len === 0 || len > 63) break;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('latin1'));
    at += 1 + len;
  }
  return labels
    .join('.')
    .replace(/[^A-Za-z0-9._-]/g, '?')
    .slice(0, 253)
    .toLowerCase();
}

/** The REFUSED answer to a query: its id and question, the response bit, the query's opcode, RCODE 5. */
export function refusedAnswer(msg: Buffer): Buffer | null {
  if (msg.length < 12 || ((msg[2] ?? 0) & 0x80) !== 0) return null;
  const out = Buffer.from(msg.subarray(0, Math.min(msg.length, 512)));
  out[2] = 0x80 | ((msg[2] ?? 0) & 0x79);
  out[3] = 0x05;
  // Keep the question count; no answers, authority or additional records.
  out.fill(0, 6, 12);
  return out;
}

export function serveDns(runs: Runs, port: number): Promise<Socket> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, from) => {
    const reply = refusedAnswer(msg);
    if (!reply) return;
    const name = queryName(msg);
    runs.bySource(from.address)?.refused(name === '' ? '(no name)' : name, 53, 'dns', DNS_REASON, Date.now() / 1000);
    sock.send(reply, from.port, from.address);
  });
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, '0.0.0.0', () => resolve(sock));
  });
}
