import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNpmPrefix } from '../../../core/process/npm-prefix.js';
import { loadEngine } from '../../../core/store/embedded/engine.js';
import {
  type EmbeddedPaths,
  embeddedPathsIn,
  SCHEMA_VERSION,
  schemaSql,
  stopEmbedded,
} from '../../../core/store/index.js';
import { chalk, tempDir } from '../../helpers/cli.js';
import { ensureBuilt, ROOT, rawPool } from './backends.js';
import { seedHistory, storedColumns, tableCounts, tableRows } from './seed.js';

/**
 * `chalk db upgrade` end to end, through the real CLI: a data directory written by PGlite 0.3
 * (Postgres 17, installed from npm here) at the schema version before this one, as an older Chalk would have left
 * it, is refused by every command that opens the store, refused by the upgrade while a server
 * holds it, then moved to this Chalk's Postgres 18 with every row as it was, and opened.
 */
const OLD = { name: '@electric-sql/pglite', version: '0.3.16' };
const OLD_MODULES = {
  pglite: '@electric-sql/pglite',
  vector: '@electric-sql/pglite/vector',
  trgm: '@electric-sql/pglite/contrib/pg_trgm',
};
const REFUSAL = (data: string) =>
  `chalk: the embedded database at ${data} is Postgres 17 and this Chalk's is Postgres 18: run chalk db upgrade to move it (the old directory is kept)\n`;

describe('chalk db upgrade from a PGlite 0.3 data directory', { timeout: 600_000 }, () => {
  let prefix: string;
  let state: string;
  let paths: EmbeddedPaths;
  let env: Record<string, string>;
  let columns: Record<string, string[]>;
  let before: Record<string, string[]>;
  let counts: Record<string, number>;
  const pgVersion = (dir: string) => readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim();
  const cli = (...args: string[]) => chalk(args, { cwd: state, env });

  beforeAll(async () => {
    await ensureBuilt();
    prefix = tempDir('chalk-pglite-0.3-');
    await ensureNpmPrefix(prefix, [OLD], 'PGlite 0.3 for the test');
    state = tempDir('chalk-upgrade-state-');
    paths = embeddedPathsIn(join(state, 'chalk', 'db'));
    env = { XDG_STATE_HOME: state, CHALK_DATABASE_URL: '' };
    mkdirSync(paths.dir, { recursive: true });
    const db = await loadEngine(prefix, OLD_MODULES)(paths.data);
    await db.exec('BEGIN');
    await db.exec(readFileSync(join(ROOT, 'tests', 'fixtures', 'schema', `v${SCHEMA_VERSION - 1}.sql`), 'utf8'));
    await db.query('INSERT INTO chalk_schema (id, version) VALUES (1, $1)', [SCHEMA_VERSION - 1]);
    await db.exec('COMMIT');
    await seedHistory(db, 'old', 6);
    // What the upgrade must bring over: the rows as this Chalk's schema makes them on the old
    // engine (its tables made from others, lesson_bits, lesson_spec_anchors and the report card's rollup, included), seen in a transaction rolled
    // back, so the directory stays as the older Chalk left it.
    await db.exec('BEGIN');
    await db.exec(schemaSql());
    const { chalk_schema: _, ...stored } = await storedColumns(db);
    columns = stored;
    before = await tableRows(db, columns);
    counts = await tableCounts(db);
    await db.exec('ROLLBACK');
    // The directory is as the older Chalk left it: version 11's rollup, not yet version 12's retry keys.
    expect(await tableCounts(db)).toHaveProperty('report_runs');
    expect(await tableCounts(db)).not.toHaveProperty('report_retry_keys');
    expect(counts).toHaveProperty('report_retry_keys');
    await db.close();
  });
  afterAll(async () => {
    if (paths) await stopEmbedded(paths).catch(() => {});
    for (const d of [prefix, state]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('is refused, with one line naming chalk db upgrade, by every command that opens the store', () => {
    expect(pgVersion(paths.data)).toBe('17');
    for (const args of [
      ['db', 'up'],
      ['lessons', '--all'],
    ]) {
      const r = cli(...args);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: REFUSAL(paths.data) });
    }
    const status = cli('db', 'status', '--json');
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout).error).toBe(REFUSAL(paths.data).slice('chalk: '.length, -1));
    expect(existsSync(paths.pidFile)).toBe(false);
    expect(pgVersion(paths.data)).toBe('17');
  });

  it('while a server holds the directory, the upgrade is refused in one line and nothing changes', async () => {
    const listing = readdirSync(paths.dir).sort();
    const server: ChildProcess = spawn(
      process.execPath,
      [join(import.meta.dirname, 'old-server.mjs'), prefix, paths.dir],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        server.once('exit', (code) => reject(new Error(`the old server exited (${code})`)));
      });
      const r = cli('db', 'upgrade');
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `chalk: the embedded database is in use by a running chalk db server (pid ${server.pid}): stop it with chalk db down and run chalk db upgrade again\n`,
      );
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
    expect(readdirSync(paths.dir).sort()).toEqual(listing);
    expect(pgVersion(paths.data)).toBe('17');
  });

  it('moves every row to Postgres 18, keeps the old directory, and the store opens', async () => {
    const r = cli('db', 'upgrade');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `installing PGlite 0.3.16 (Postgres 17): @electric-sql/pglite@0.3.16 into ${state}/chalk/db-engines/pglite-0.3.16\n`,
    );
    expect(r.stderr).toContain('reading the Postgres 17 database with PGlite 0.3.16');
    const lines = r.stdout.trim().split('\n');
    const rows = Object.entries(counts)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
    expect(lines[0]).toBe(`moved the embedded database from Postgres 17 to 18, every row read back the same: ${rows}`);
    const kept = /is kept at (\S+);/.exec(lines[1] ?? '')?.[1] ?? '';
    expect(kept).toMatch(new RegExp(`^${paths.dir}/data\\.pg17-\\d{8}T\\d{6}$`));
    expect(pgVersion(kept)).toBe('17');
    expect(pgVersion(paths.data)).toBe('18');
    expect(readdirSync(paths.dir).filter((n) => n.startsWith('data'))).toHaveLength(2);

    const up = cli('db', 'up');
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toMatch(
      new RegExp(`^database started: .* \\(Postgres 18\\.\\d+, schema v${SCHEMA_VERSION}\\)\n$`),
    );
    const pool = await rawPool({ kind: 'embedded', paths });
    try {
      expect(await tableRows(pool, columns)).toEqual(before);
      const after = await tableCounts(pool);
      expect(after).toEqual(counts);
    } finally {
      await pool.end();
    }
    const lessons = cli('lessons', '--all', '--json');
    expect(lessons.code, lessons.stderr).toBe(0);
    expect(JSON.parse(lessons.stdout).lessons).toHaveLength(6);
    await stopEmbedded(paths);
  });

  it('a second upgrade has nothing to do, and --cleanup removes what the first kept', () => {
    const again = cli('db', 'upgrade');
    expect({ code: again.code, stdout: again.stdout }).toEqual({
      code: 0,
      stdout: 'the embedded database is already Postgres 18: nothing to upgrade\n',
    });
    const clean = cli('db', 'upgrade', '--cleanup');
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(
      new RegExp(`^removed ${paths.dir}/data\\.pg17-\\d{8}T\\d{6}\\nremoved ${state}/chalk/db-engines\\n$`),
    );
    expect(readdirSync(paths.dir).filter((n) => n.startsWith('data'))).toEqual(['data']);
    expect(existsSync(join(state, 'chalk', 'db-engines'))).toBe(false);
  });
});
