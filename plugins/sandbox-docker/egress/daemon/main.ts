import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { Agent, type Dispatcher, EnvHttpProxyAgent } from 'undici';
import { readLogLine } from './accesslog.js';
import { serveCtl } from './ctl.js';
import { serveDns } from './dns.js';
import { gatewayHandler } from './gateway.js';
import { answer, PROBE_HOST } from './helper.js';
import { DAEMON_ID, EGRESS_PATHS, EGRESS_PORTS, SQUID_GID, UPSTREAM_ENV } from './layout.js';
import type { Run } from './runs.js';
import { Runs } from './runs.js';
import { parseUpstream, squidConf } from './squid-conf.js';

/**
 * The egress container's daemon (its entry point, started as root): writes Squid's
 * configuration, opens the control socket, the policy socket, the log listener, the model
 * gateway and the DNS refuser, starts Squid (which drops to its own user), then drops to the daemon's user and
 * waits until a CONNECT through both Squid ports works. Squid ending ends the daemon, and with
 * it the container: the next run starts a fresh one.
 */

const say = (line: string) => process.stderr.write(`chalk-egress: ${line}\n`);

function lines(onLine: (l: string) => void, cap: number) {
  let buffered = '';
  return (d: string) => {
    buffered += d;
    let cut = buffered.indexOf('\n');
    while (cut >= 0) {
      onLine(buffered.slice(0, cut));
      buffered = buffered.slice(cut + 1);
      cut = buffered.indexOf('\n');
    }
    if (buffered.length > cap) buffered = '';
  };
}

function listen(server: Server | ReturnType<typeof createHttpServer>, where: string | number, host?: string) {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (typeof where === 'string') server.listen(where, () => resolve());
    else server.listen(where, host, () => resolve());
  });
}

/** One CONNECT through the front port; resolves whether it was answered 200 (both ports up). */
function probe(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(EGRESS_PORTS.proxy, '127.0.0.1');
    let got = '';
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2000, () => done(false));
    s.on('error', () => done(false));
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) done(/^HTTP\/1\.[01] 200/.test(got));
    });
    s.write(`CONNECT ${PROBE_HOST}:443 HTTP/1.1\r\nHost: ${PROBE_HOST}:443\r\n\r\n`);
  });
}

async function main(): Promise<void> {
  const upstreamText = process.env[UPSTREAM_ENV] ?? '';
  const upstream = upstreamText === '' ? null : parseUpstream(upstreamText);
  if (typeof upstream === 'string') throw new Error(`${UPSTREAM_ENV} ${upstream}`);
  mkdirSync(EGRESS_PATHS.run, { recursive: true });
  writeFileSync(EGRESS_PATHS.squidConf, squidConf(upstream), { mode: 0o640 });
  chownSync(EGRESS_PATHS.squidConf, 0, SQUID_GID);

  const runs = new Runs();
  const dispatchers = new Map<Run, Dispatcher>();
  let ready = false;
  let markReady: (ok: boolean) => void = () => {};
  const readiness = new Promise<boolean>((r) => {
    markReady = r;
  });

  const ctl = createServer((s) =>
    serveCtl(s, {
      runs,
      ready: () => ready,
      whenReady: () => readiness,
      opened: (run) => {
        const p = run.settings.proxy ?? {};
        const connect = { noDelay: true };
        // Through the person's proxy when their environment names one, else straight to the endpoint.
        dispatchers.set(
          run,
          p.http || p.https
            ? new EnvHttpProxyAgent({
                httpProxy: p.http ?? '',
                httpsProxy: p.https ?? '',
                noProxy: p.noProxy ?? '',
                connect,
              })
            : new Agent({ connect }),
        );
      },
      closed: (run) => {
        void dispatchers.get(run)?.close();
        dispatchers.delete(run);
      },
    }),
  );
  const policy = createServer((s) => {
    s.setEncoding('utf8');
    s.on(
      'data',
      lines((l) => s.write(`${answer(runs, l)}\n`), 64 * 1024),
    );
    s.on('error', () => s.destroy());
  });
  const log = createServer((s) => {
    s.setEncoding('utf8');
    s.on(
      'data',
      lines((l) => readLogLine(runs, l), 64 * 1024),
    );
    s.on('error', () => s.destroy());
  });
  const gateway = createHttpServer(
    gatewayHandler({
      runs,
      dispatcherFor: (run) => {
        const d = dispatchers.get(run);
        if (!d) throw new Error('the run has no dispatcher');
        return d;
      },
    }),
  );
  gateway.keepAliveTimeout = 30_000;
  // Streamed events are small writes: each goes out at once.
  gateway.on('connection', (s) => s.setNoDelay(true));
  for (const p of [EGRESS_PATHS.ctl, EGRESS_PATHS.policy]) rmSync(p, { force: true });
  await listen(ctl, EGRESS_PATHS.ctl);
  await listen(policy, EGRESS_PATHS.policy);
  chownSync(EGRESS_PATHS.ctl, DAEMON_ID, DAEMON_ID);
  chmodSync(EGRESS_PATHS.ctl, 0o600);
  chownSync(EGRESS_PATHS.policy, DAEMON_ID, SQUID_GID);
  chmodSync(EGRESS_PATHS.policy, 0o660);
  // Last, as root no longer writes here: the daemon's; Squid (starting as root, then its group) passes through.
  chownSync(EGRESS_PATHS.run, DAEMON_ID, SQUID_GID);
  chmodSync(EGRESS_PATHS.run, 0o751);
  await listen(log, EGRESS_PORTS.log, '127.0.0.1');
  await listen(gateway, EGRESS_PORTS.gateway, '0.0.0.0');
  await serveDns(runs, EGRESS_PORTS.dns);

  const squid = spawn('/usr/sbin/squid', ['-N', '-f', EGRESS_PATHS.squidConf], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  squid.on('exit', (code, signal) => {
    say(`squid exited (${signal ?? code}); stopping`);
    process.exit(1);
  });
  // The gateway and the helpers' answers need no root: drop it for good.
  process.setgroups?.([DAEMON_ID]);
  process.setgid?.(DAEMON_ID);
  process.setuid?.(DAEMON_ID);
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
  for (let i = 0; i < 300 && !ready; i++) {
    ready = await probe();
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  markReady(ready);
  say(ready ? 'ready' : 'squid did not answer a CONNECT within 30 s');
}

main().catch((err: unknown) => {
  say(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
