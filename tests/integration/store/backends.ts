import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { acquireLock } from '../../../core/process/lock.js';
import { run } from '../../../core/process/run.js';
import { embeddedPathsIn, ensureEmbedded, type StoreTarget, stopEmbedded } from '../../../core/store/index.js';

/**
 * The two databases every store test runs against: the embedded PGlite server and a real
 * Postgres server (CHALK_TEST_PG_URL, started by .ci/setup.d/30-postgres.sh). In CI both
 * must be there; elsewhere the server backend is skipped when the variable is unset.
 */
export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const CI = process.env.CI === 'true';
export const PG_URL = process.env.CHALK_TEST_PG_URL ?? '';
if (CI && !PG_URL) throw new Error('CHALK_TEST_PG_URL is not set: .ci/setup.d/30-postgres.sh should export it');

export interface Backend {
  name: 'embedded' | 'postgres';
  /** A fresh, empty database; `env` points chalk processes at it. */
  fresh(): Promise<{ target: StoreTarget; env: NodeJS.ProcessEnv; dispose(): Promise<void> }>;
}

const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
    const p = join(dir, e.name);
    return Math.max(m, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }, 0);

/** The embedded server runs from dist/: build it when the store's sources are newer. */
export async function ensureBuilt(): Promise<void> {
  const daemon = join(ROOT, 'dist', 'core', 'store', 'embedded', 'daemon.js');
  if (existsSync(daemon) && statSync(daemon).mtimeMs >= newest(join(ROOT, 'core', 'store'))) return;
  const r = await run('flock', ['/tmp/chalk-build.lock', 'npx', 'tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
  if (!existsSync(daemon)) throw new Error(`build failed: ${r.stdout}${r.stderr}`);
}

/**
 * A PGlite data directory made once per machine and copied for each test: making one
 * (initdb in WASM) takes ~30 s on two busy cores, opening a copy a few seconds.
 */
async function templateData(): Promise<string> {
  const pglite = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  );
  const base = join(tmpdir(), `chalk-test-pglite-template-${pglite.version}`);
  const paths = embeddedPathsIn(base);
  const done = join(base, 'ready');
  if (existsSync(done)) return paths.data;
  const release = await acquireLock(`${base}.lock`, 300_000);
  try {
    if (!existsSync(done)) {
      rmSync(base, { recursive: true, force: true });
      await ensureEmbedded(paths, 300_000);
      await stopEmbedded(paths);
      cpSync(paths.logFile, done);
    }
  } finally {
    release();
  }
  return paths.data;
}

export const embedded: Backend = {
  name: 'embedded',
  async fresh() {
    await ensureBuilt();
    const state = mkdtempSync(join(tmpdir(), 'chalk-store-'));
    const paths = embeddedPathsIn(join(state, 'chalk', 'db'));
    cpSync(await templateData(), paths.data, { recursive: true });
    return {
      target: { kind: 'embedded', paths },
      env: { ...process.env, XDG_STATE_HOME: state, CHALK_DATABASE_URL: '' },
      async dispose() {
        await stopEmbedded(paths).catch(() => {});
        rmSync(state, { recursive: true, force: true });
      },
    };
  },
};

export const postgres: Backend = {
  name: 'postgres',
  async fresh() {
    const name = `chalk_t_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(PG_URL);
    u.pathname = `/${name}`;
    const url = u.toString();
    return {
      target: { kind: 'server', url },
      env: { ...process.env, CHALK_DATABASE_URL: url },
      async dispose() {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        // WITH (FORCE) fails for a role that is not a superuser while autovacuum works on the
        // database (it may not signal that process); a plain DROP asks autovacuum to stop and
        // waits, so only this role's own connections are ended first.
        await c.query(
          `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
           WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()`,
          [name],
        );
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
        await c.end();
      },
    };
  },
};

/** The backends to run: both in CI; outside CI the server only when CHALK_TEST_PG_URL is set. */
export const BACKENDS: Backend[] = PG_URL ? [embedded, postgres] : [embedded];

/** A plain pool on a backend's database, without applying the schema (for building old databases). */
export async function rawPool(target: StoreTarget): Promise<pg.Pool> {
  if (target.kind === 'server') return new pg.Pool({ connectionString: target.url, max: 1 });
  await ensureEmbedded(target.paths, 120_000);
  return new pg.Pool({ host: target.paths.dir, port: 5432, user: 'postgres', database: 'postgres', max: 1 });
}
