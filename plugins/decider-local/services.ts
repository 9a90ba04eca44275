import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { DeciderEntry } from '../../core/decider.js';
import { alive, readPid } from '../../core/host.js';
import { LocalDecider } from './client.js';
import { EmbedClient } from './embed/client.js';
import type { Installed } from './installed.js';
import type { LocalDeciderPaths } from './paths.js';

/** How often the idle watcher looks at the last question's time. */
export const WATCH_EVERY_MS = 30_000;
/** How long a stopped service gets to exit before it is killed. */
const STOP_GRACE_MS = 5_000;

/** Where the services listen: the ports of CHALK_DECIDER_URL and CHALK_EMBED_URL, always on 127.0.0.1. */
export interface ServicePorts {
  decider: number;
  embed: number;
}

/** The port of a loopback URL (8471 and 8472 by default). */
export function portOf(url: string): number {
  const u = new URL(url);
  if (u.port !== '') return Number(u.port);
  return u.protocol === 'https:' ? 443 : 80;
}

const entry = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

/**
 * The environment a service process gets: enough to run, offline, with its models where
 * `chalk decider up` put them. Nothing else of Chalk's (no token, no database URL) is passed on.
 */
export function serviceEnv(paths: LocalDeciderPaths, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { HF_HOME: paths.hfHome, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' };
  for (const k of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'XDG_STATE_HOME', 'XDG_CACHE_HOME']) {
    if (env[k] !== undefined) out[k] = env[k];
  }
  return out;
}

function launch(opts: {
  cmd: string;
  args: string[];
  log: string;
  pidFile: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): number {
  const out = openSync(opts.log, 'a', 0o600);
  try {
    const child = spawn(opts.cmd, opts.args, {
      detached: true,
      cwd: opts.cwd,
      stdio: ['ignore', out, out],
      env: opts.env,
    });
    child.on('error', () => {}); // a missing executable: its pid file stays empty and the wait says so
    child.unref();
    if (child.pid === undefined) throw new Error(`${opts.cmd} could not be started`);
    writeFileSync(opts.pidFile, `${child.pid}\n`, { mode: 0o600 });
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/**
 * Why the local decider answers nothing yet though it is on its way: its process lives and
 * started less than `startMs` ago (it is loading its model). Null otherwise (it is down, or it
 * had its time and is not answering: that is `unreachable`).
 */
export function startingReason(paths: LocalDeciderPaths, startMs: number, now = Date.now()): string | null {
  const pid = readPid(paths.deciderPid);
  if (pid === null || !alive(pid)) return null;
  let since: number;
  try {
    since = now - statSync(paths.deciderPid).mtimeMs;
  } catch {
    return null;
  }
  if (since >= startMs) return null;
  return `the local decider is still starting (pid ${pid}, started ${Math.round(since / 1000)}s ago)`;
}

/** Whether both services' processes live. */
export function servicesRunning(paths: LocalDeciderPaths): boolean {
  return [paths.deciderPid, paths.embedPid].every((f) => {
    const pid = readPid(f);
    return pid !== null && alive(pid);
  });
}

/**
 * Starts strands-decider, the embedding service and the idle watcher, detached, offline,
 * on 127.0.0.1, logs in the state directory. The caller holds the `up` lock and has
 * stopped any leftovers. Returns at once: `waitHealthy` waits.
 */
export function startServices(opts: {
  paths: LocalDeciderPaths;
  installed: Installed;
  ports: ServicePorts;
  idleMs: number;
  env?: NodeJS.ProcessEnv;
}): void {
  const { paths, installed } = opts;
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const env = serviceEnv(paths, opts.env);
  const stamp = `--- ${new Date().toISOString()} started by chalk (pid ${process.pid})\n`;
  for (const log of [paths.deciderLog, paths.embedLog, paths.watchLog])
    writeFileSync(log, stamp, { flag: 'a', mode: 0o600 });
  writeFileSync(paths.lastUsed, '', { mode: 0o600 });
  launch({
    cmd: installed.bin,
    args: [
      'serve',
      installed.decider.path,
      '--host',
      '127.0.0.1',
      '--port',
      String(opts.ports.decider),
      '--model-name',
      basename(installed.decider.model),
      ...(installed.device ? ['--device', installed.device] : []),
    ],
    log: paths.deciderLog,
    pidFile: paths.deciderPid,
    env,
    cwd: paths.dir,
  });
  launch({
    cmd: process.execPath,
    args: [
      entry('./embed/service-main.js'),
      '--port',
      String(opts.ports.embed),
      '--model-dir',
      installed.embed.path,
      '--runtime',
      installed.embed.runtime,
      '--revision',
      installed.embed.revision,
      '--last-used',
      paths.lastUsed,
    ],
    log: paths.embedLog,
    pidFile: paths.embedPid,
    env,
    cwd: paths.dir,
  });
  launch({
    cmd: process.execPath,
    args: [
      entry('./watch-main.js'),
      '--dir',
      paths.dir,
      '--idle-ms',
      String(opts.idleMs),
      '--every-ms',
      String(WATCH_EVERY_MS),
    ],
    log: paths.watchLog,
    pidFile: paths.watchPid,
    env,
    cwd: paths.dir,
  });
}

function lastLine(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return lines[lines.length - 1]?.trim() || 'no output';
  } catch {
    return 'no log';
  }
}

export class ServiceError extends Error {
  override name = 'ServiceError';
}

/** A client of each service at its port, for health checks and the benchmark. */
export function serviceClients(paths: LocalDeciderPaths, ports: ServicePorts, entryOf: DeciderEntry) {
  const url = `http://127.0.0.1:${ports.decider}`;
  return {
    decider: new LocalDecider({ entry: { ...entryOf, url }, url, askLock: paths.askLock, lastUsed: paths.lastUsed }),
    embed: new EmbedClient({ url: `http://127.0.0.1:${ports.embed}` }),
  };
}

/**
 * Waits until both services answer their health checks, up to `timeoutMs`; gives up at once
 * when one's process exits (naming its log's last line). Returns the decider's model.
 */
export async function waitHealthy(opts: {
  paths: LocalDeciderPaths;
  ports: ServicePorts;
  entry: DeciderEntry;
  timeoutMs: number;
}): Promise<{ model: string | null; ms: number }> {
  const started = Date.now();
  const { decider, embed } = serviceClients(opts.paths, opts.ports, opts.entry);
  const services = [
    { name: 'the local decider', pid: opts.paths.deciderPid, log: opts.paths.deciderLog },
    { name: 'the embedding service', pid: opts.paths.embedPid, log: opts.paths.embedLog },
  ];
  try {
    let deciderOk: string | null | false = false;
    let embedOk = false;
    while (Date.now() - started < opts.timeoutMs) {
      for (const s of services) {
        const pid = readPid(s.pid);
        if (pid === null || !alive(pid)) throw new ServiceError(`${s.name} exited: ${lastLine(s.log)} (log: ${s.log})`);
      }
      if (deciderOk === false) {
        const h = await decider.health({ timeoutMs: 2_000 });
        if (h.healthy) deciderOk = h.model ?? null;
      }
      if (!embedOk) embedOk = (await embed.health({ timeoutMs: 2_000 })).healthy;
      if (deciderOk !== false && embedOk) return { model: deciderOk, ms: Date.now() - started };
      await sleep(250);
    }
    const which = deciderOk === false ? services[0] : services[1];
    throw new ServiceError(
      `${which?.name} did not become healthy in ${Math.round(opts.timeoutMs / 1000)}s (see ${which?.log})`,
    );
  } finally {
    await Promise.all([decider.close(), embed.close()]);
  }
}

/** Signals a service's process group (each was started detached, as its group's leader), else the process. */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

/** Stops the watcher and both services (TERM, then KILL after a grace), removing their pid files. Returns what ran. */
export async function stopServices(paths: LocalDeciderPaths): Promise<string[]> {
  const stopped: string[] = [];
  const named = [
    { name: 'idle watcher', file: paths.watchPid },
    { name: 'decider', file: paths.deciderPid },
    { name: 'embedding service', file: paths.embedPid },
  ];
  const live = named.flatMap((n) => {
    const pid = readPid(n.file);
    return pid !== null && pid !== process.pid && alive(pid) ? [{ ...n, pid }] : [];
  });
  for (const l of live) signal(l.pid, 'SIGTERM');
  const until = Date.now() + STOP_GRACE_MS;
  while (live.some((l) => alive(l.pid)) && Date.now() < until) await sleep(100);
  for (const l of live) {
    if (alive(l.pid)) signal(l.pid, 'SIGKILL');
    stopped.push(l.name);
  }
  for (const n of named) rmSync(n.file, { force: true });
  return stopped;
}
