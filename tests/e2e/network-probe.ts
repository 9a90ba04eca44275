import { createSocket, type Socket } from 'node:dgram';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * The escape suite's two halves (tests/e2e/hostile-network.test.ts): listeners on the host that
 * count whatever reaches them, and `probe.cjs`, a script committed in the scenario's
 * repository that the setup, the agent and the rubric run inside the sandbox, trying every way
 * out and printing one `PROBE name=result` line each.
 */

export interface Listeners {
  /** The docker0 bridge's address (the host as containers on the default bridge see it). */
  bridge: string;
  /** The host's global IPv6 address, if it has one. */
  hostV6: string | undefined;
  tcpPort: number;
  udpPort: number;
  v6Port: number;
  tlsPort: number;
  httpPort: number;
  /** What arrived: connections, datagrams, and the allowed server's request paths. */
  seen: { tcp: number; udp: number; v6: number; tls: number; http: string[] };
  close(): Promise<void>;
}

const listenTcp = (s: Server | HttpServer, host: string) =>
  new Promise<number>((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, host, () => resolve((s.address() as AddressInfo).port));
  });

export async function startListeners(bridge: string): Promise<Listeners> {
  const seen = { tcp: 0, udp: 0, v6: 0, tls: 0, http: [] as string[] };
  const count = (k: 'tcp' | 'v6' | 'tls') => (c: import('node:net').Socket) => {
    seen[k]++;
    c.destroy();
  };
  // Every address of the host (the bridges', the internal networks' if any, eth0's).
  const tcp = createServer(count('tcp'));
  const tcpPort = await listenTcp(tcp, '0.0.0.0');
  const v6 = createServer(count('v6'));
  const v6Port = await listenTcp(v6, '::');
  const tls = createServer(count('tls'));
  const tlsPort = await listenTcp(tls, bridge);
  const http = createHttpServer((req, res) => {
    seen.http.push(req.url ?? '');
    res.end('hello-from-the-allowed-host\n');
  });
  const httpPort = await listenTcp(http, bridge);
  const udp: Socket = createSocket('udp4');
  udp.on('message', () => {
    seen.udp++;
  });
  const udpPort = await new Promise<number>((resolve) => udp.bind(0, '0.0.0.0', () => resolve(udp.address().port)));
  const hostV6 = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'))?.address;
  return {
    bridge,
    hostV6,
    tcpPort,
    udpPort,
    v6Port,
    tlsPort,
    httpPort,
    seen,
    close: async () => {
      udp.close();
      await Promise.all(
        [tcp, v6, tls, http].map(
          (s) =>
            new Promise<void>((r) => {
              s.close(() => r());
              (s as HttpServer).closeAllConnections?.();
            }),
        ),
      );
    },
  };
}

/** The probe script for the sandbox: Node 18's CommonJS, no packages. */
export function probeScript(l: Listeners, o: { leakName: string; foreignKey: string }): string {
  const cfg = JSON.stringify({
    bridge: l.bridge,
    hostV6: l.hostV6 ?? '',
    tcpPort: l.tcpPort,
    udpPort: l.udpPort,
    v6Port: l.v6Port,
    tlsPort: l.tlsPort,
    httpPort: l.httpPort,
    leakName: o.leakName,
    foreignKey: o.foreignKey,
  });
  return `'use strict';
// Tries every way out of the sandbox; prints one PROBE line each (tests/e2e/network-probe.ts).
const net = require('node:net');
const tls = require('node:tls');
const dgram = require('node:dgram');
const dns = require('node:dns');
const fs = require('node:fs');
const C = ${cfg};
const phase = process.argv[2] || 'any';
const say = (k, v) => console.log('PROBE ' + phase + ':' + k + '=' + v);
const proxy = new URL(process.env.HTTPS_PROXY || 'http://0.0.0.0:1');

function raw(host, port, family) {
  return new Promise((r) => {
    const s = net.connect({ host, port, family });
    const done = (v) => { s.destroy(); r(v); };
    s.setTimeout(1500, () => done('timeout'));
    s.on('connect', () => done('CONNECTED'));
    s.on('error', (e) => done(e.code || 'error'));
  });
}

/** CONNECT through the egress proxy; resolves the status and the socket (open on 200). */
function connect(target) {
  return new Promise((r) => {
    const s = net.connect(Number(proxy.port), proxy.hostname);
    let got = '';
    s.setTimeout(5000, () => { s.destroy(); r({ status: 'timeout' }); });
    s.on('error', (e) => r({ status: e.code || 'error' }));
    s.on('data', function head(d) {
      got += d.toString('latin1');
      if (!got.includes('\\r\\n\\r\\n')) return;
      s.removeListener('data', head);
      s.setTimeout(0);
      const status = (got.split(' ')[1] || '?');
      if (status !== '200') s.destroy();
      r({ status, socket: s });
    });
    s.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n');
  });
}

async function tlsThrough(target, servername) {
  const c = await connect(target);
  if (c.status !== '200') return 'connect-' + c.status;
  return new Promise((r) => {
    const t = tls.connect({ socket: c.socket, servername, rejectUnauthorized: false });
    const done = (v) => { t.destroy(); r(v); };
    t.setTimeout(5000, () => done('timeout'));
    t.on('secureConnect', () => done('HANDSHAKE'));
    t.on('error', (e) => done('closed:' + (e.code || 'error')));
    t.on('close', () => done('closed'));
  });
}

/** The proxy's answer to a CONNECT, the tunnel closed again. */
async function status(target) {
  const c = await connect(target);
  if (c.socket) c.socket.destroy();
  return c.status;
}

function udp(host, port) {
  return new Promise((r) => {
    const s = dgram.createSocket('udp4');
    s.on('error', (e) => { s.close(); r(e.code || 'error'); });
    s.send(Buffer.from('probe'), port, host, (e) => { setTimeout(() => { try { s.close(); } catch {} r(e ? e.code || 'error' : 'sent'); }, 300); });
  });
}

const lookup = (name) => new Promise((r) => dns.lookup(name, (e, a) => r(e ? e.code : 'RESOLVED:' + a)));

async function gateway(path, headers, marker) {
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: marker }] });
  try {
    const res = await fetch(process.env.ANTHROPIC_BASE_URL + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
      body,
    });
    return String(res.status);
  } catch (e) {
    return 'error:' + ((e.cause && e.cause.code) || e.message);
  }
}

async function main() {
  const gw = ((fs.readFileSync('/proc/net/route', 'utf8').split('\\n')[1] || '').split('\\t')[2] || '00000000');
  const gwIp = [6, 4, 2, 0].map((i) => parseInt(gw.slice(i, i + 2), 16)).join('.');
  say('raw-tcp-bridge', await raw(C.bridge, C.tcpPort, 4));
  say('raw-tcp-network-gateway', await raw(gwIp, C.tcpPort, 4));
  say('raw-tcp-internet', await raw('203.0.113.80', 443, 4));
  say('raw-v6-loopback-host', await raw('::1', C.v6Port, 6));
  if (C.hostV6) say('raw-v6-host', await raw(C.hostV6, C.v6Port, 6));
  say('udp-bridge', await udp(C.bridge, C.udpPort));
  say('udp-dns-public', await udp('8.8.8.8', 53));
  say('dns-off-list', await lookup(C.leakName));
  say('dns-registry', await lookup('registry.npmjs.org'));
  say('connect-bare-address', await status(C.bridge + ':' + C.tcpPort));
  say('connect-number-form', await status('2886795265:' + C.tcpPort));
  say('connect-public-address', await status('203.0.113.80:443'));
  say('connect-variant-blocked', await status('BLOCKED.Example.COM.:443'));
  say('connect-v6', await status('[::1]:' + C.v6Port));
  say('connect-model-host', await status('api.anthropic.com:443'));
  say('connect-variant-allowed', await status('Registry.NPMJS.org.:443'));
  say('sni-differs', await tlsThrough('registry.npmjs.org:443', 'evil.example.com'));
  say('sni-on-address', await tlsThrough(C.bridge + ':' + C.tlsPort, 'registry.npmjs.org'));
  say('tls-allowed', await tlsThrough('registry.npmjs.org:443', 'registry.npmjs.org'));
  try {
    const res = await fetch('http://' + C.bridge + ':' + C.httpPort + '/' + phase);
    say('allowed-host', res.status + ':' + (await res.text()).trim());
  } catch (e) {
    say('allowed-host', 'error:' + ((e.cause && e.cause.code) || e.message));
  }
  const token = process.env.ANTHROPIC_API_KEY || (fs.existsSync('/tmp/token') ? fs.readFileSync('/tmp/token', 'utf8') : '');
  if (process.env.ANTHROPIC_BASE_URL || token) {
    const base = process.env.ANTHROPIC_BASE_URL || 'http://' + proxy.hostname + ':8080';
    process.env.ANTHROPIC_BASE_URL = base;
    say('gateway-files', await gateway('/v1/files', { 'x-api-key': token }, 'FILES-' + phase));
    say('gateway-foreign-key', await gateway('/v1/messages', { 'x-api-key': C.foreignKey }, 'FOREIGN-' + phase));
    say('gateway-token-and-foreign', await gateway('/v1/messages', { 'x-api-key': token, authorization: 'Bearer ' + C.foreignKey }, 'BOTH-' + phase));
  }
  if (process.env.REPLAY_TOKEN) say('gateway-replay', await gateway('/v1/messages', { 'x-api-key': process.env.REPLAY_TOKEN }, 'REPLAY-' + phase));
}
main().then(() => {
  say('done', 'yes');
  // Whatever is still open (a keep-alive socket) must not keep the phase waiting.
  process.exit(0);
});
`;
}

/** `name -> result` of every PROBE line in `text` for `phase`. */
export function probeResults(text: string, phase: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(new RegExp(`PROBE ${phase}:([a-z0-9-]+)=(\\S*)`, 'g')))
    out[m[1] as string] = m[2] as string;
  return out;
}
