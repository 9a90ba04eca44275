import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreInfo } from '../ports/store.js';
import { alive, readPid } from '../process/pid.js';
import { checkDataMajor } from './embedded/engine.js';
import { probe } from './embedded/ensure.js';
import type { EmbeddedPaths } from './embedded/paths.js';
import { PgStore } from './pg-store.js';
import { describeUrl, type StoreTarget } from './target.js';

export interface DbStatus {
  kind: StoreTarget['kind'];
  /** The server answers. */
  running: boolean;
  /** Embedded only. */
  pid: number | null;
  socket: string | null;
  dataDir: string | null;
  dataBytes: number | null;
  /** host[:port]/database for a server; never the password. */
  where: string;
  info: StoreInfo | null;
  error: string | null;
}

/** Bytes under a directory (files only, symlinks not followed). */
export function directorySize(dir: string): number {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += directorySize(p);
    else if (e.isFile()) {
      try {
        total += statSync(p).size;
      } catch {
        // vanished meanwhile
      }
    }
  }
  return total;
}

async function embeddedStatus(paths: EmbeddedPaths, timeoutMs: number): Promise<DbStatus> {
  const pid = readPid(paths.pidFile);
  const running = (pid !== null && alive(pid) && (await probe(paths.socket))) || false;
  const base: DbStatus = {
    kind: 'embedded',
    running,
    pid: running ? pid : null,
    socket: paths.socket,
    dataDir: paths.data,
    dataBytes: directorySize(paths.data),
    where: paths.socket,
    info: null,
    error: null,
  };
  try {
    checkDataMajor(paths);
  } catch (err) {
    return { ...base, error: (err as Error).message };
  }
  // Status never starts the server: it only reads a running one.
  if (!running) return base;
  return withInfo(base, { kind: 'embedded', paths }, timeoutMs);
}

async function withInfo(base: DbStatus, target: StoreTarget, timeoutMs: number): Promise<DbStatus> {
  try {
    const store = await PgStore.open(target, timeoutMs);
    try {
      return { ...base, running: true, info: await store.info() };
    } finally {
      await store.close();
    }
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message : String(err) };
  }
}

/** What `chalk db status` shows. Never starts the embedded server. */
export async function dbStatus(target: StoreTarget, timeoutMs: number): Promise<DbStatus> {
  if (target.kind === 'embedded') return embeddedStatus(target.paths, timeoutMs);
  const base: DbStatus = {
    kind: 'server',
    running: false,
    pid: null,
    socket: null,
    dataDir: null,
    dataBytes: null,
    where: describeUrl(target.url),
    info: null,
    error: null,
  };
  return withInfo(base, target, timeoutMs);
}
