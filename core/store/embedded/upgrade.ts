import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../../errors.js';
import { acquireLock, LockTimeout } from '../../process/lock.js';
import { alive, readPid } from '../../process/pid.js';
import {
  checkDataMajor,
  dataMajor,
  EMBEDDED_MAJOR,
  ENGINES,
  type EngineDb,
  enginesDir,
  installedEngine,
} from './engine.js';
import { bringToSchema, dumpTables, restoreTables } from './move.js';
import type { EmbeddedPaths } from './paths.js';
import { openPglite } from './server.js';

export type UpgradeResult =
  | { moved: false; why: string }
  | { moved: true; from: number; to: number; rows: Record<string, number>; kept: string };

/** Old data directories an upgrade kept: `data.pg<major>-<when>` beside `data`. */
const KEPT = /^data\.pg\d+-\d{8}T\d{6}$/;

const stamp = () =>
  new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '');

async function closing<T>(db: EngineDb, use: (db: EngineDb) => Promise<T>): Promise<T> {
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** Holds the embedded database's start lock (so no server starts meanwhile) and refuses one in use. */
async function holdIdle(paths: EmbeddedPaths): Promise<() => void> {
  let release: () => void;
  try {
    release = await acquireLock(paths.lock, 10_000);
  } catch (err) {
    if (err instanceof LockTimeout)
      throw new UserError(`another chalk is starting the embedded database (lock ${paths.lock}); try again`);
    throw err;
  }
  const pid = readPid(paths.pidFile);
  if (pid !== null && alive(pid)) {
    release();
    throw new UserError(
      `the embedded database is in use by a running chalk db server (pid ${pid}): stop it with chalk db down and run chalk db upgrade again`,
    );
  }
  return release;
}

/** Whether a database holds any table (a release that cannot read a directory sees none). */
async function seesTables(db: EngineDb): Promise<boolean> {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`,
  );
  return (r.rows[0]?.n ?? 0) > 0;
}

/**
 * Opens a copy of the old directory with each release of its major in turn (the directory itself
 * stays exactly as its own Chalk left it) until one sees its tables, brings that copy to this
 * Chalk's schema and writes every table out into `work/dump`.
 */
async function readOld(data: string, major: number, work: string, env: NodeJS.ProcessEnv, say: (l: string) => void) {
  const engines = ENGINES[major] ?? [];
  for (const engine of engines) {
    const open = await installedEngine(engine, env, say);
    const copy = join(work, 'old');
    rmSync(copy, { recursive: true, force: true });
    cpSync(data, copy, { recursive: true });
    const dump = await closing(await open(copy), async (db) => {
      if (!(await seesTables(db))) return null;
      say(`reading the Postgres ${major} database with PGlite ${engine.packages[0]?.version} (a copy of ${data})`);
      await bringToSchema(db);
      return dumpTables(db, join(work, 'dump'), say);
    });
    if (dump) return dump;
    say(`PGlite ${engine.packages[0]?.version} sees no table in it`);
  }
  const tried = engines.map((e) => e.packages[0]?.version).join(', ');
  throw new UserError(
    engines.length === 0
      ? `this Chalk cannot read a Postgres ${major} data directory (it reads ${Object.keys(ENGINES).join(', ')})`
      : `no PGlite release of Postgres ${major} this Chalk knows (${tried}) sees a table in ${data}: nothing was moved`,
  );
}

/**
 * `chalk db upgrade`: moves a data directory of an older Postgres major to this Chalk's. A copy
 * of it is opened with a PGlite of its own major (installed on demand into the state
 * directory, readOld) and written out table by table; a new directory is made with this Chalk's PGlite,
 * loaded and read back; only then is the old one renamed aside (kept) and the new one put in its
 * place. Any failure before that leaves the old directory as it was and removes the rest.
 */
export async function upgradeEmbedded(
  paths: EmbeddedPaths,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<UpgradeResult> {
  const major = dataMajor(paths.data);
  if (major === null)
    return { moved: false, why: `there is no embedded database at ${paths.data}: nothing to upgrade` };
  if (major === EMBEDDED_MAJOR)
    return { moved: false, why: `the embedded database is already Postgres ${major}: nothing to upgrade` };
  if (major > EMBEDDED_MAJOR) checkDataMajor(paths);
  const release = await holdIdle(paths);
  const work = join(paths.dir, 'upgrade');
  const fresh = join(paths.dir, 'data.new');
  try {
    rmSync(work, { recursive: true, force: true });
    rmSync(fresh, { recursive: true, force: true });
    mkdirSync(join(work, 'dump'), { recursive: true, mode: 0o700 });
    const dump = await readOld(paths.data, major, work, env, say);
    say(`writing a Postgres ${EMBEDDED_MAJOR} database`);
    await closing(await openPglite(fresh), async (db) => {
      await bringToSchema(db);
      await restoreTables(db, dump, say);
    });
    const kept = join(dirname(paths.data), `data.pg${major}-${stamp()}`);
    renameSync(paths.data, kept);
    renameSync(fresh, paths.data);
    return {
      moved: true,
      from: major,
      to: EMBEDDED_MAJOR,
      rows: Object.fromEntries(dump.tables.map((t) => [t.table, t.rows])),
      kept,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (existsSync(paths.data)) rmSync(fresh, { recursive: true, force: true });
    release();
  }
}

/** `chalk db upgrade --cleanup`: removes the old directories upgrades kept and the engines they installed. */
export function cleanupUpgrade(paths: EmbeddedPaths, env: NodeJS.ProcessEnv): string[] {
  const major = dataMajor(paths.data);
  if (major !== EMBEDDED_MAJOR) {
    throw new UserError(
      major === null
        ? `there is no embedded database at ${paths.data}: nothing to clean up after`
        : `the embedded database is still Postgres ${major}: run chalk db upgrade first (cleanup removes what an upgrade kept)`,
    );
  }
  const removed: string[] = [];
  const kept = existsSync(paths.dir) ? readdirSync(paths.dir).filter((n) => KEPT.test(n)) : [];
  for (const name of kept) {
    rmSync(join(paths.dir, name), { recursive: true, force: true });
    removed.push(join(paths.dir, name));
  }
  const engines = enginesDir(env);
  if (existsSync(engines)) {
    rmSync(engines, { recursive: true, force: true });
    removed.push(engines);
  }
  return removed;
}
