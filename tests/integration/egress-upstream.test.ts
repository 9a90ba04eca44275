import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker } from '../../plugins/sandbox-docker/docker.js';
import { EGRESS_NETWORK, EgressEngine, ensureNetwork } from '../../plugins/sandbox-docker/egress/engine.js';
import { ensureEgressImage } from '../../plugins/sandbox-docker/egress/image.js';
import { openRunEgress, type RunEgress } from '../../plugins/sandbox-docker/egress/run-net.js';
import { dockerReachable, TEST_IMAGE } from './sandbox-helpers.js';

/**
 * A machine that reaches the outside only through its own proxy (HTTPS_PROXY, a corporate
 * one) keeps working: the egress container chains to it, for TLS tunnels too, and a sandbox's
 * request arrives there as a CONNECT to the registry. The upstream here is a plain Squid in a
 * container of the egress image (the machine's real way out sits behind it).
 */
const available = await dockerReachable();

const UPSTREAM_CONF = [
  'http_port 3128',
  'pid_filename none',
  'cache deny all',
  'access_log stdio:/tmp/access.log',
  'cache_log stdio:/dev/stderr',
  'http_access allow all',
].join('\n');

async function exec(c: Dockerode.Container, cmd: string[]): Promise<string> {
  const e = await c.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const s = await e.start({});
  const out = new PassThrough();
  (await docker()).modem.demuxStream(s, out, out);
  let text = '';
  out.on('data', (b: Buffer) => {
    text += b.toString('utf8');
  });
  await new Promise((r) => s.on('end', r));
  return text;
}

describe.skipIf(!available)('egress through an upstream proxy', { timeout: 240_000 }, () => {
  const d = docker();
  let upstream: Dockerode.Container;
  let egress: Dockerode.Container | undefined;
  let net: RunEgress | undefined;
  let client: Dockerode.Container | undefined;

  beforeAll(async () => {
    const image = await ensureEgressImage();
    upstream = await (await d).createContainer({
      Image: image,
      Labels: { 'chalk.test': 'egress-upstream' },
      Cmd: [
        'sh',
        '-c',
        `printf '%s\\n' "$CONF" > /tmp/up.conf && touch /tmp/access.log && chown proxy /tmp/access.log && exec squid -N -f /tmp/up.conf`,
      ],
      Env: [`CONF=${UPSTREAM_CONF}`],
    });
    await upstream.start();
    // Where the machine's proxy would be: reachable from the egress container's network.
    await (await d).getNetwork(await ensureNetwork(await d)).connect({ Container: upstream.id });
  });
  afterAll(async () => {
    await net?.close().catch(() => undefined);
    await client?.remove({ force: true }).catch(() => undefined);
    await egress?.remove({ force: true }).catch(() => undefined);
    await upstream?.remove({ force: true }).catch(() => undefined);
  });

  it('a sandbox reaches the registry through the egress container chained to HTTPS_PROXY', async () => {
    const ip = (await upstream.inspect()).NetworkSettings.Networks[EGRESS_NETWORK]?.IPAddress;
    const engine = new EgressEngine({ env: { ...process.env, HTTPS_PROXY: `http://${ip}:3128` } });
    egress = await engine.container();
    net = await openRunEgress(
      engine,
      {
        repo: 'egress-upstream',
        ticket: `UP-${process.pid}`,
        runId: 'up',
      },
      { policy: { mode: 'registries', allow: '' }, env: {} },
    );
    client = await (await d).createContainer({
      Image: TEST_IMAGE,
      Cmd: ['sleep', 'infinity'],
      Env: net.containerEnv,
      Labels: { 'chalk.test': 'egress-upstream' },
      HostConfig: { NetworkMode: net.network, Dns: [net.proxyAddress] },
    });
    await client.start();
    await net.ready();
    const got = await exec(client, [
      'node',
      '-e',
      "fetch('https://registry.npmjs.org/is-number').then(r => console.log('status', r.status), e => console.log('error', e.cause?.code ?? e.message))",
    ]);
    expect(got).toContain('status 200');
    const log = await exec(upstream, ['cat', '/tmp/access.log']);
    expect(log).toMatch(/TCP_TUNNEL\/200 \d+ CONNECT registry\.npmjs\.org:443/);
    // Still refused upstream of the proxy: a host off the list never reaches the corporate proxy.
    const refused = await exec(client, [
      'node',
      '-e',
      "fetch('https://example.com/').then(r => console.log('status', r.status), () => console.log('refused'))",
    ]);
    expect(refused).toContain('refused');
    expect(await exec(upstream, ['cat', '/tmp/access.log'])).not.toContain('example.com');
  });
});
