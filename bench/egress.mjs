#!/usr/bin/env node
// What the egress proxy and the model gateway cost, each against the same work done directly,
// measured in the same run, alternated so machine load hits both alike; medians printed.
//
// 1. A real `npm install` in a sandbox's setup: DIRECT, a container of the sandbox image on the
//    engine's default bridge (the network every sandbox had before), against PROXIED, a sandbox
//    the harness opens (its own network, the registry reached through the egress container,
//    chained to whatever the machine's own way out is). Each install starts from an empty npm
//    cache. Target: PROXIED at most 5% more wall time.
// 2. A model call: one container on both networks posts the same streamed Messages request to
//    the scripted model server directly and through the gateway (its token, an open call,
//    usage counted), alternately. Target: the gateway adds at most 2 ms at the median.
// 3. What a sandbox's network costs to set up and take down (openRunEgress, close).
//
// Needs the Docker engine, the sandbox image and `npm run build`; reaches the npm registry:
//   node bench/egress.mjs [--installs 5] [--calls 200] [--packages express@4.21.2,...]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    installs: { type: 'string', default: '5' },
    calls: { type: 'string', default: '200' },
    packages: { type: 'string', default: 'express@4.21.2,commander@12.1.0,semver@7.6.3' },
  },
});
const INSTALLS = Number(values.installs);
const CALLS = Number(values.calls);
if (!(INSTALLS > 0 && CALLS > 0)) {
  console.error('bench/egress.mjs: --installs and --calls must be positive whole numbers');
  process.exit(2);
}
const dist = join(import.meta.dirname, '..', 'dist');
if (!existsSync(join(dist, 'plugins/sandbox-docker/sandbox.js'))) {
  console.error('bench/egress.mjs: dist/ is not built; run npm run build first');
  process.exit(2);
}
const { DockerSandbox } = await import(join(dist, 'plugins/sandbox-docker/sandbox.js'));
const { docker } = await import(join(dist, 'plugins/sandbox-docker/docker.js'));
const { EgressEngine } = await import(join(dist, 'plugins/sandbox-docker/egress/engine.js'));
const { openRunEgress } = await import(join(dist, 'plugins/sandbox-docker/egress/run-net.js'));
const { startModelServer } = await import(join(dist, 'demo/model-server.js'));

const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (ms) => (ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`);
const label = `chalk.bench=${process.pid}`;
const d = await docker();
const cleanups = [];
async function cleanup() {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  cleanups.length = 0;
  spawnSync('sh', ['-c', `docker rm -f $(docker ps -aq --filter label=${label}) 2>/dev/null`], { stdio: 'ignore' });
}
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(sig, () => {
    cleanup().finally(() => process.exit(code));
  });
}

const pkgJson = JSON.stringify({
  name: 'bench',
  version: '1.0.0',
  private: true,
  dependencies: Object.fromEntries(
    values.packages.split(',').map((p) => {
      const at = p.lastIndexOf('@');
      return [p.slice(0, at), p.slice(at + 1)];
    }),
  ),
});
const install = `mkdir -p /tmp/b && cd /tmp/b && printf '%s' '${pkgJson}' > package.json && npm install --no-audit --no-fund --loglevel=error >/dev/null && ls node_modules | wc -l`;

/** The CPU and memory limits both sides get, so the network is the only difference. */
const CPUS = 1;
const MEMORY_MB = 2048;

/** A plain container of the image on the default bridge, hardened and limited like a sandbox but for its network. */
async function directContainer() {
  const c = await d.createContainer({
    Image: IMAGE,
    Cmd: ['sleep', 'infinity'],
    User: '10001:10001',
    Env: ['HOME=/home/chalk'],
    Labels: { 'chalk.bench': String(process.pid) },
    HostConfig: {
      NetworkMode: 'bridge',
      NanoCpus: CPUS * 1e9,
      Memory: MEMORY_MB * 1024 * 1024,
      MemorySwap: MEMORY_MB * 1024 * 1024,
      PidsLimit: 1024,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Init: true,
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,exec,mode=1777,size=1g', '/home/chalk': 'rw,exec,mode=1777,size=1g' },
    },
  });
  await c.start();
  return c;
}

async function execIn(c, cmd) {
  const e = await c.exec({ Cmd: ['sh', '-c', cmd], AttachStdout: true, AttachStderr: true });
  const s = await e.start({});
  let out = '';
  const sink = new Writable({
    write(b, _enc, cb) {
      out += b.toString('utf8');
      cb();
    },
  });
  d.modem.demuxStream(s, sink, sink);
  await new Promise((r) => s.on('end', r));
  const { ExitCode } = await e.inspect();
  if (ExitCode !== 0) throw new Error(`'${cmd.slice(0, 60)}...' exited ${ExitCode}: ${out.slice(-300)}`);
  return out;
}

try {
  const sandbox = new DockerSandbox({
    image: IMAGE,
    tmpfsSize: '1g',
    telemetry: null,
    env: {},
    handleSignals: false,
    cpus: CPUS,
    memoryMb: MEMORY_MB,
  });
  cleanups.push(() => sandbox.closeAll());
  const spec = (i) => ({
    repo: `bench${process.pid}`,
    source: '/dev/null',
    ticket: `EGR-${i}`,
    runId: `bench-${i}`,
    branch: 'chalk/EGR',
    author: { name: 'b', email: 'b@example.com' },
  });

  // 1. npm install, direct against proxied.
  const npm = { direct: [], proxied: [] };
  let packages = '';
  for (let i = 0; i < INSTALLS; i++) {
    for (const v of i % 2 === 0 ? ['direct', 'proxied'] : ['proxied', 'direct']) {
      if (v === 'direct') {
        const c = await directContainer();
        try {
          const t0 = now();
          packages = (await execIn(c, install)).trim();
          npm.direct.push(now() - t0);
        } finally {
          await c.remove({ force: true });
        }
      } else {
        const s = await sandbox.open(spec(i));
        try {
          const t0 = now();
          const r = await s.exec(install, { cwd: '/tmp' });
          if (r.exitCode !== 0)
            throw new Error(`npm install through the proxy exited ${r.exitCode}: ${r.stderr.slice(-300)}`);
          npm.proxied.push(now() - t0);
        } finally {
          await s.stop();
        }
      }
    }
  }

  // 2. Model calls: direct against through the gateway, from one container on both networks.
  const model = await startModelServer({ bridge: true });
  cleanups.push(() => model.close());
  if (!model.bridgeAddress) throw new Error('no docker bridge address for the scripted model server');
  const engine = new EgressEngine({ env: process.env });
  const t0 = now();
  const net = await openRunEgress(engine, spec('gw'), {
    policy: { mode: 'off', allow: '' },
    env: { ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: model.url },
  });
  const netOpen = now() - t0;
  cleanups.push(() => net.close());
  const client = await d.createContainer({
    Image: IMAGE,
    Cmd: ['sleep', 'infinity'],
    Labels: { 'chalk.bench': String(process.pid) },
    HostConfig: { NetworkMode: net.network },
  });
  await client.start();
  cleanups.push(() => client.remove({ force: true }));
  await d.getNetwork('bridge').connect({ Container: client.id });
  const direct = `http://${model.bridgeAddress}:${model.port}`;
  const gateway = net.agentEnv.ANTHROPIC_BASE_URL;
  const token = net.agentEnv.ANTHROPIC_API_KEY;
  // Node's own http client with keep-alive (its fetch costs milliseconds a call on Node 18, which would hide
  // what is measured): the same request each time, the streamed answer read to its end.
  const caller = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'bench' }] });
const one = (base, key) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  const u = new URL(base + '/v1/messages');
  const q = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'anthropic-version': '2023-06-01', 'x-api-key': key } }, (r) => {
    r.resume();
    r.on('end', () => (r.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(base + ' answered ' + r.statusCode))));
  });
  q.on('error', reject);
  q.end(body);
});
(async () => {
  const out = { direct: [], gateway: [] };
  const D = ${JSON.stringify(direct)}, G = ${JSON.stringify(gateway)}, K = 'sk-ant-bench', T = ${JSON.stringify(token)};
  for (let i = 0; i < 20; i++) { await one(D, K); await one(G, T); }
  for (let i = 0; i < ${CALLS}; i++) {
    for (const v of i % 2 ? ['gateway', 'direct'] : ['direct', 'gateway']) out[v].push(v === 'direct' ? await one(D, K) : await one(G, T));
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e.message); process.exit(1); });`;
  await net.beginCall(1000);
  const calls = JSON.parse(
    (await execIn(client, `node -e '${caller.replace(/'/g, "'\\''")}'`)).trim().split('\n').pop(),
  );
  const counted = await net.endCall();
  const t1 = now();
  await net.close();
  const netClose = now() - t1;
  cleanups.pop();

  // 3. A sandbox network's own cost, a few more times.
  const opens = [netOpen];
  const closes = [netClose];
  for (let i = 0; i < 4; i++) {
    const a = now();
    const n = await openRunEgress(engine, spec(`net${i}`), { policy: { mode: 'registries', allow: '' }, env: {} });
    opens.push(now() - a);
    const b = now();
    await n.close();
    closes.push(now() - b);
  }

  const [dn, pn] = [median(npm.direct), median(npm.proxied)];
  const [dc, gc] = [median(calls.direct), median(calls.gateway)];
  console.log(`egress bench: ${IMAGE}; medians, runs alternated`);
  console.log(
    `npm install of ${values.packages} (${packages} packages, empty cache), ${INSTALLS} each: direct ${fmt(dn)}, through the egress proxy ${fmt(pn)}: ${((pn / dn - 1) * 100).toFixed(1)}% more wall time (target at most 5%)`,
  );
  console.log(
    `model call (streamed), ${CALLS} each: direct ${fmt(dc)}, through the gateway ${fmt(gc)}: +${fmt(gc - dc)} per call at the median (target at most 2 ms); ` +
      `the gateway counted ${counted?.requests ?? 0} requests, ${counted?.inputTokens ?? 0} input and ${counted?.outputTokens ?? 0} output tokens, $${(counted?.costUsd ?? 0).toFixed(4)}`,
  );
  console.log(
    `a sandbox's network: set up ${fmt(median(opens))} (network, egress container attached, control connection, run opened), taken down ${fmt(median(closes))}`,
  );
} finally {
  await cleanup();
}
