import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { UserError } from '../../errors.js';
import { PACKAGE_ROOT } from '../../paths.js';
import { acquireLock, LockTimeout } from '../../process/lock.js';
import { alive, readPid } from '../../process/pid.js';
import { checkDataMajor } from './engine.js';
import type { EmbeddedPaths } from './paths.js';

/** Whether something accepts connections on the socket (the server listens only once PGlite is ready). */
export function probe(socket: string, timeoutMs = 1_000): Promise<boolean> {
  if (!existsSync(socket)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = connect(socket);
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** True when connecting failed because nothing listens on the socket: no server, or a stale socket file. */
export function nobodyListens(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

/** The compiled server entry; from the sources (tests), the build's copy. */
export function daemonEntry(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return join(here, '..', 'daemon.js');
  const built = join(PACKAGE_ROOT, 'dist', 'core', 'store', 'embedded', 'daemon.js');
  if (!existsSync(built)) throw new UserError(`the embedded database server is not built: run npm run build`);
  return built;
}

function lastLogLine(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    return lines[lines.length - 1] ?? '';
  } catch {
    return '';
  }
}

/** The long-lived server gets only what it needs from the environment: none of the caller's tokens. */
function daemonEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}

export interface EnsureResult {
  /** Whether this call started the server. */
  started: boolean;
  pid: number | null;
}

/**
 * Makes sure the per-machine embedded server runs, starting it when needed; refuses a data
 * directory of another Postgres major (checkDataMajor) with one line. Concurrent
 * callers (a fleet launching eight runs) start exactly one: the start happens under a
 * machine-wide lock and is re-checked once the lock is held.
 */
export async function ensureEmbedded(paths: EmbeddedPaths, timeoutMs: number): Promise<EnsureResult> {
  // Whoever serves it, data of another Postgres major is refused before anything reads it.
  checkDataMajor(paths);
  if (await probe(paths.socket)) return { started: false, pid: readPid(paths.pidFile) };
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const wait = `the embedded database did not become ready in ${Math.round(timeoutMs / 1000)}s (CHALK_DB_TIMEOUT sets the wait; log: ${paths.logFile})`;
  let release: () => void;
  try {
    release = await acquireLock(paths.lock, timeoutMs);
  } catch (err) {
    if (err instanceof LockTimeout)
      throw new UserError(`timed out waiting for another chalk to start the embedded database (lock ${paths.lock})`);
    throw err;
  }
  try {
    if (await probe(paths.socket)) return { started: false, pid: readPid(paths.pidFile) };
    let child: ReturnType<typeof spawn> | null = null;
    let exited: number | null = null;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await probe(paths.socket)) return { started: child !== null, pid: readPid(paths.pidFile) };
      if (exited !== null) {
        throw new UserError(
          `the embedded database server exited (${lastLogLine(paths.logFile)}); log: ${paths.logFile}`,
        );
      }
      // A live pid without a socket is a server still opening its data: wait for it. Else start one.
      const running = readPid(paths.pidFile);
      if (child === null && (running === null || !alive(running))) {
        rmSync(paths.socket, { force: true });
        const out = openSync(paths.logFile, 'a', 0o600);
        child = spawn(process.execPath, [daemonEntry(), paths.dir], {
          detached: true,
          cwd: paths.dir,
          stdio: ['ignore', out, out],
          env: daemonEnv(),
        });
        closeSync(out);
        child.once('exit', (code) => {
          exited = code ?? 1;
        });
        child.unref();
      }
      await sleep(100);
    }
    throw new UserError(wait);
  } finally {
    release();
  }
}

/** Stops the embedded server with SIGTERM and waits for it to exit; false when none ran. */
export async function stopEmbedded(paths: EmbeddedPaths, timeoutMs = 30_000): Promise<boolean> {
  const pid = readPid(paths.pidFile);
  if (pid === null || !alive(pid)) {
    rmSync(paths.pidFile, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline)
      throw new UserError(`the embedded database server (pid ${pid}) did not stop within ${timeoutMs / 1000}s`);
    await sleep(100);
  }
  return true;
}
