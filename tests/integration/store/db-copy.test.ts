import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRows } from '../../../core/store/copy/copy.js';
import { COPIED, NOT_COPIED } from '../../../core/store/copy/plan.js';
import { PgStore } from '../../../core/store/index.js';
import { CHALK_BIN, chalk, tempDir } from '../../helpers/cli.js';
import { BACKENDS, embedded, PG_URL, postgres, rawPool } from './backends.js';
import { seedHistory, tableCounts, tableNames } from './seed.js';

/**
 * `chalk db copy` through the real CLI: two machines' embedded databases (their serial ids
 * overlapping) into one Postgres server (Debian's, without pgvector: embeddings arrive as
 * real[]), each twice; then the server's rows back into a machine (real[] to vector), where
 * that machine's own rows are recognised. Bad input is one line, exit 1, nothing written.
 */
type Fresh = Awaited<ReturnType<typeof embedded.fresh>>;

const PASSWORD = PG_URL ? decodeURIComponent(new URL(PG_URL).password) : '';

/** The CLI's closing table: table -> [added, already there]. */
function copied(stdout: string): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const m of stdout.matchAll(/^(\w+) +(\d+) added {2}(\d+) already there$/gm)) {
    out[m[1] as string] = [Number(m[2]), Number(m[3])];
  }
  return out;
}

const copiedTables = COPIED.map((t) => t.table);

/** Each copied table's rows without ids, keyed by where they were born, for comparing two databases. */
async function content(db: pg.Pool, origin: string): Promise<Record<string, string[]>> {
  const own = `coalesce(x.origin, '${origin}')`;
  const key = `${own} || ':' || coalesce(x.origin_id, x.id)`;
  const ref = (table: string, col: string) =>
    `(SELECT coalesce(p.origin, '${origin}') || ':' || coalesce(p.origin_id, p.id) FROM ${table} p WHERE p.id = x.${col})`;
  await db.query(`SET TIME ZONE 'UTC'`);
  const q = async (sql: string) => (await db.query<{ r: string }>(sql)).rows.map((x) => x.r).sort();
  const embedding = `translate(x.embedding::text, '{}', '[]')`;
  return {
    runs: await q(`SELECT ${key} || ' ' || (to_jsonb(x) - 'id' - 'origin' - 'origin_id')::text AS r FROM runs x`),
    events: await q(`SELECT ${key} || ' ' || (to_jsonb(x) - 'id' - 'origin' - 'origin_id')::text AS r FROM events x`),
    lessons: await q(
      `SELECT ${key} || ' ' || (to_jsonb(x) - 'id' - 'origin' - 'origin_id' - 'embedding')::text || ' ' || coalesce(${embedding}, '-') AS r FROM lessons x`,
    ),
    lesson_recalls: await q(
      `SELECT ${key} || ' ' || ${ref('runs', 'call_id')} || ' ' || ${ref('lessons', 'lesson_id')} || ' ' ||
         (to_jsonb(x) - 'id' - 'origin' - 'origin_id' - 'call_id' - 'lesson_id')::text AS r FROM lesson_recalls x`,
    ),
    decisions: await q(
      `SELECT ${key} || ' ' || coalesce(${ref('runs', 'call_id')}, '-') || ' ' || coalesce(${ref('lessons', 'lesson_id')}, '-') || ' ' ||
         (to_jsonb(x) - 'id' - 'origin' - 'origin_id' - 'call_id' - 'lesson_id')::text AS r FROM decisions x`,
    ),
  };
}

const origin = async (db: pg.Pool) =>
  (await db.query<{ o: string }>('SELECT origin AS o FROM chalk_schema')).rows[0]?.o ?? '';

describe.each(BACKENDS)('what db copy copies, on $name', (backend) => {
  it('a new database has no table db copy neither copies nor names as not copied', async () => {
    const db = await backend.fresh();
    const store = await PgStore.open(db.target, 120_000);
    try {
      const names = await tableNames(store.pool);
      const known = [...copiedTables, ...Object.keys(NOT_COPIED)];
      expect(names.filter((n) => !known.includes(n))).toEqual([]);
      for (const t of copiedTables) expect(names).toContain(t);
    } finally {
      await store.close();
      await db.dispose();
    }
  });
});

describe.skipIf(!PG_URL)('chalk db copy between machines and a server', { timeout: 300_000 }, () => {
  let a: Fresh;
  let b: Fresh;
  let server: Awaited<ReturnType<typeof postgres.fresh>>;
  let serverUrl: string;
  const pools: pg.Pool[] = [];
  const pool = async (f: Fresh | typeof server) => {
    const p = await rawPool(f.target);
    pools.push(p);
    return p;
  };
  const copy = (machine: Fresh, args: string[], env: Record<string, string> = {}) =>
    chalk(['db', 'copy', ...args], {
      cwd: tempDir(),
      env: { XDG_STATE_HOME: machine.env.XDG_STATE_HOME, CHALK_DATABASE_URL: '', ...env },
    });

  beforeAll(async () => {
    [a, b, server] = await Promise.all([embedded.fresh(), embedded.fresh(), postgres.fresh()]);
    serverUrl = server.target.kind === 'server' ? server.target.url : '';
    for (const [m, tag] of [
      [a, 'alpha'],
      [b, 'bravo'],
    ] as const) {
      const store = await PgStore.open(m.target, 120_000);
      await seedHistory(store.pool, tag);
      await store.close();
    }
  });
  afterAll(async () => {
    for (const p of pools) await p.end();
    for (const d of [a, b, server]) await d?.dispose();
  });

  it('copies a machine into an empty server with every row, and a second copy adds nothing', async () => {
    const first = copy(a, ['--to-env', 'TEAM_DB'], { TEAM_DB: serverUrl });
    expect(first.code, first.stderr).toBe(0);
    const aPool = await pool(a);
    const aCounts = await tableCounts(aPool, copiedTables);
    expect(aCounts).toEqual({ runs: 8, events: 4, lessons: 4, lesson_recalls: 4, decisions: 4 });
    expect(copied(first.stdout)).toEqual(Object.fromEntries(copiedTables.map((t) => [t, [aCounts[t], 0]])));
    expect(first.stdout).toMatch(/^copied this machine's embedded database to 127\.0\.0\.1:\d+\/chalk_t_\w+:$/m);
    expect(first.stderr).toContain('copying lessons: 4 of 4\n');
    const sPool = await pool(server);
    expect(await tableCounts(sPool, copiedTables)).toEqual(aCounts);
    const aOrigin = await origin(aPool);
    expect(await content(sPool, 'server')).toEqual(await content(aPool, aOrigin));
    // The server has no pgvector: the embeddings are real[] there, the same numbers.
    const t = await sPool.query(
      `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'embedding'`,
    );
    expect(t.rows[0].t).toBe('real[]');
    expect((await sPool.query('SELECT count(*)::int AS n FROM lessons WHERE embedding IS NOT NULL')).rows[0].n).toBe(2);

    const second = copy(a, ['--to-env', 'TEAM_DB'], { TEAM_DB: serverUrl });
    expect(second.code, second.stderr).toBe(0);
    expect(copied(second.stdout)).toEqual(Object.fromEntries(copiedTables.map((t) => [t, [0, aCounts[t]]])));
    expect(await tableCounts(sPool, copiedTables)).toEqual(aCounts);
  });

  it('a second machine adds only its own rows, though its ids are the same numbers; --to warns and masks its password', async () => {
    const bPool = await pool(b);
    const bCounts = await tableCounts(bPool, copiedTables);
    const r = copy(b, ['--to', serverUrl]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'warning: the password in --to was visible to other users of this machine (ps); put the URL in an environment variable and use --to-env NAME\n',
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain(PASSWORD);
    expect(copied(r.stdout)).toEqual(Object.fromEntries(copiedTables.map((t) => [t, [bCounts[t], 0]])));
    const sPool = await pool(server);
    const both = await tableCounts(sPool, copiedTables);
    expect(both).toEqual({ runs: 16, events: 8, lessons: 8, lesson_recalls: 8, decisions: 8 });
    const again = copy(a, ['--to-env', 'TEAM_DB'], { TEAM_DB: serverUrl });
    expect(copied(again.stdout).runs).toEqual([0, 8]);
    expect(await tableCounts(sPool, copiedTables)).toEqual(both);
    // A lesson's recalls and decisions still point at its own machine's rows.
    const wrong = await sPool.query(
      `SELECT count(*)::int AS n FROM lesson_recalls r JOIN runs c ON c.id = r.call_id JOIN lessons l ON l.id = r.lesson_id
       WHERE c.repo <> l.repo OR c.origin <> r.origin OR l.origin <> r.origin`,
    );
    expect(wrong.rows[0].n).toBe(0);
  });

  it("the server's rows copied back into a machine: real[] becomes vector, and that machine's own rows are known", async () => {
    const sPool = await pool(server);
    const bPool = await pool(b);
    const bOrigin = await origin(bPool);
    const lines: string[] = [];
    const r = await copyRows(sPool, bPool, (l) => lines.push(l));
    // bravo's rows came from b: they are there already, under their own ids; alpha's are new.
    expect(r.map((t) => [t.table, t.added, t.already])).toEqual(
      copiedTables.map((t) => [t, t === 'runs' ? 8 : 4, t === 'runs' ? 8 : 4]),
    );
    expect(await tableCounts(bPool, copiedTables)).toEqual(await tableCounts(sPool, copiedTables));
    expect(await content(bPool, bOrigin)).toEqual(await content(sPool, 'server'));
    const v = await bPool.query(
      `SELECT count(*)::int AS n FROM lessons WHERE embedding IS NOT NULL AND repo = 'alpha'`,
    );
    expect(v.rows[0].n).toBe(2);
    expect(lines).toContain('copying runs: 16 of 16');
  });

  it('bad input is one line and exit 1, with the password never shown and nothing written', async () => {
    const secret = 'hunter2-not-shown';
    const unreachable = copy(a, ['--to-env', 'X'], { X: `postgresql://chalk:${secret}@127.0.0.1:1/chalk` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /^chalk: cannot use the Postgres server at 127\.0\.0\.1:1\/chalk: .*ECONNREFUSED.*; is the server running and listening on that host and port\?\n$/,
    );
    expect(unreachable.stdout + unreachable.stderr).not.toContain(secret);

    const other = await postgres.fresh();
    const url = other.target.kind === 'server' ? other.target.url : '';
    const o = new pg.Client({ connectionString: url });
    o.on('error', () => {});
    try {
      await o.connect();
      await o.query(
        `CREATE TABLE orders (id serial PRIMARY KEY, total numeric); INSERT INTO orders (total) VALUES (9.5)`,
      );
      const r = copy(a, ['--to-env', 'SHOP_DB'], { SHOP_DB: url });
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(
        /^chalk: the database at 127\.0\.0\.1:\d+\/chalk_t_\w+ is not empty and not Chalk's \(1 table: orders\): give SHOP_DB an empty database, or the one your team's Chalk uses\n$/,
      );
      const left = await o.query(
        `SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`,
      );
      expect(left.rows.map((x) => x.relname)).toEqual(['orders']);
    } finally {
      await o.end();
      await other.dispose();
    }

    for (const [args, env, line] of [
      [
        [],
        {},
        'chalk: chalk db copy needs the server to copy to: --to-env NAME (the variable holding its URL), or set CHALK_DATABASE_URL\n',
      ],
      [['--to-env', 'NOPE_UNSET'], {}, 'chalk: --to-env NOPE_UNSET: that environment variable is not set\n'],
      [
        ['--to-env', 'X'],
        { X: `mysql://u:${secret}@h/d` },
        'chalk: X must be a postgres:// or postgresql:// connection string\n',
      ],
    ] as const) {
      const r = copy(a, [...args], env);
      expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 1, stderr: line, stdout: '' });
    }
  });

  it('a password given with --to is gone from the process title while the copy runs', async () => {
    let connected: (s: Socket) => void = () => {};
    const arrived = new Promise<Socket>((resolve) => {
      connected = resolve;
    });
    // A server that takes the connection and never answers: the copy waits on it.
    const hold = createServer((s) => connected(s));
    await new Promise<void>((resolve) => hold.listen(0, '127.0.0.1', resolve));
    const port = (hold.address() as { port: number }).port;
    const secret = 'pw-in-argv-4242';
    const child = spawn(
      process.execPath,
      [CHALK_BIN, 'db', 'copy', '--to', `postgresql://u:${secret}@127.0.0.1:${port}/d`],
      {
        env: { ...process.env, XDG_STATE_HOME: a.env.XDG_STATE_HOME, CHALK_DATABASE_URL: '', CHALK_DB_TIMEOUT: '120' },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const socket = await arrived;
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8');
      expect(cmdline).toContain(`chalk db copy --to 127.0.0.1:${port}/d`);
      expect(cmdline).not.toContain(secret);
      socket.destroy();
    } finally {
      child.kill('SIGTERM');
      await exited;
      hold.close();
    }
  });
});
