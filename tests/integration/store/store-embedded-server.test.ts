import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { readPid } from '../../../core/process/pid.js';
import { run } from '../../../core/process/run.js';
import { type EmbeddedPaths, PgStore, probe } from '../../../core/store/index.js';
import { BACKENDS, embedded, ROOT } from './backends.js';

const WRITER = join(import.meta.dirname, 'writer.mjs');

function writer(env: NodeJS.ProcessEnv, count: number, tag: string) {
  const child = spawn(process.execPath, [WRITER, String(count), tag], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const acks: number[] = [];
  let err = '';
  let buf = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('ack ')) acks.push(Number(l.slice(4)));
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  return { child, acks, done, stderr: () => err };
}

const starts = (paths: EmbeddedPaths) =>
  readFileSync(paths.logFile, 'utf8')
    .split('\n')
    .filter((l) => / started pid \d+$/.test(l)).length;

let disposers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const d of disposers) await d();
  disposers = [];
});

describe.each(BACKENDS)('8 processes x 500 calls at once on $name', (backend) => {
  it('records exactly 4,000 rows (and the embedded server is started exactly once)', async () => {
    const db = await backend.fresh();
    disposers.push(db.dispose);
    const writers = Array.from({ length: 8 }, (_, i) => writer(db.env, 500, `w${i}`));
    const codes = await Promise.all(writers.map((w) => w.done));
    expect(codes, writers.map((w) => w.stderr()).join('')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const store = await PgStore.open(db.target, 60_000);
    try {
      const r = await store.pool.query(
        `SELECT count(*)::int AS n, count(DISTINCT run_id)::int AS d FROM runs WHERE repo = 'load'`,
      );
      expect(r.rows[0]).toEqual({ n: 4000, d: 4000 });
      expect(new Set(writers.flatMap((w) => w.acks)).size).toBe(4000);
    } finally {
      await store.close();
    }
    if (db.target.kind === 'embedded') {
      expect(starts(db.target.paths)).toBe(1);
      // and no second server process was even spawned (it would log that another holds the pid)
      expect(readFileSync(db.target.paths.logFile, 'utf8')).not.toMatch(/another server/);
    }
  }, 240_000);
});

describe('the embedded server process', () => {
  it('serves 8 clients with interleaved transactions and parameterised queries without crossing them', async () => {
    const db = await embedded.fresh();
    disposers.push(db.dispose);
    const store = await PgStore.open(db.target, 120_000); // starts the server, applies the schema
    await store.close();
    if (db.target.kind !== 'embedded') throw new Error('unreachable');
    const connect = async () => {
      const c = new pg.Client({
        host: (db.target as { paths: EmbeddedPaths }).paths.dir,
        user: 'postgres',
        database: 'postgres',
      });
      await c.connect();
      return c;
    };
    const clients = await Promise.all(Array.from({ length: 8 }, connect));
    const wrong: string[] = [];
    await Promise.all(
      clients.map(async (c, k) => {
        for (let i = 0; i < 60; i++) {
          const ticket = `PROJ-${k}`;
          const add = (branch: string) =>
            c.query(`INSERT INTO events (repo, ticket, kind) VALUES ($1, $2, $3) RETURNING ticket, kind`, [
              branch,
              ticket,
              i % 2 ? 'submitted' : 'detention',
            ]);
          if (i % 3 === 0) {
            await c.query('BEGIN');
            await add('tx');
            await new Promise((r) => setTimeout(r, 1)); // let other clients queue up meanwhile
            const r = await add('tx');
            await c.query(i % 9 === 0 ? 'ROLLBACK' : 'COMMIT');
            if (r.rows[0]?.ticket !== ticket) wrong.push(`${k}/${i}: tx row of ${r.rows[0]?.ticket}`);
          } else {
            const r = await add('plain');
            if (r.rows[0]?.ticket !== ticket) wrong.push(`${k}/${i}: row of ${r.rows[0]?.ticket}`);
          }
        }
      }),
    );
    // A client that dies inside a transaction: its work is rolled back and the others carry on.
    const quitter = await connect();
    quitter.on('error', () => {}); // its own end is expected
    await quitter.query('BEGIN');
    await quitter.query(`INSERT INTO events (repo, ticket, kind) VALUES ('tx', 'PROJ-99', 'ready')`);
    (quitter as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const check = clients[0] as pg.Client;
    const r = await check.query(
      `SELECT repo, ticket, count(*)::int AS n FROM events GROUP BY repo, ticket ORDER BY repo, ticket`,
    );
    await Promise.all(clients.map((c) => c.end()));
    expect(wrong).toEqual([]);
    // Per client: 40 plain rows; 20 transactions, 13 committed (i % 9 != 0) with 2 rows each.
    const expected = Array.from({ length: 8 }, (_, k) => [
      { repo: 'plain', ticket: `PROJ-${k}`, n: 40 },
      { repo: 'tx', ticket: `PROJ-${k}`, n: 26 },
    ]).flat();
    expect(r.rows).toEqual(expected.sort((a, b) => a.repo.localeCompare(b.repo) || a.ticket.localeCompare(b.ticket)));
  }, 240_000);

  it('after SIGKILL in the middle of a stream of writes, the next command finds every acknowledged row', async () => {
    const db = await embedded.fresh();
    disposers.push(db.dispose);
    if (db.target.kind !== 'embedded') throw new Error('unreachable');
    const paths = db.target.paths;
    const w = writer(db.env, 100_000, 'kill');
    while (w.acks.length < 300) {
      if (w.child.exitCode !== null) throw new Error(`writer exited early: ${w.stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const pid = readPid(paths.pidFile);
    expect(pid).not.toBeNull();
    process.kill(pid as number, 'SIGKILL');
    expect(await w.done).not.toBe(0); // the writer lost its server mid-stream
    const acked = [...w.acks];
    expect(acked.length).toBeGreaterThanOrEqual(300);

    // The next command starts a new server, which recovers the data directory.
    const up = await run(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), 'db', 'up'], { env: db.env });
    expect(up.code, up.stderr).toBe(0);
    expect(readPid(paths.pidFile)).not.toBe(pid);
    const store = await PgStore.open(db.target, 60_000);
    try {
      const r = await store.pool.query<{ id: string }>(`SELECT id FROM runs WHERE branch = 'kill'`);
      const stored = new Set(r.rows.map((x) => Number(x.id)));
      expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      await store.close();
    }
    expect(starts(paths)).toBe(2);
  }, 240_000);

  it('stops cleanly on SIGTERM (db down), leaving no pid file or socket, and starts again on demand', async () => {
    const db = await embedded.fresh();
    disposers.push(db.dispose);
    if (db.target.kind !== 'embedded') throw new Error('unreachable');
    const paths = db.target.paths;
    const cli = (...args: string[]) =>
      run(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...args], { env: db.env });
    const up = await cli('db', 'up');
    expect(up.stdout).toMatch(/database started/);
    const status = JSON.parse((await cli('db', 'status', '--json')).stdout);
    expect(status).toMatchObject({ kind: 'embedded', running: true, socket: paths.socket });
    expect(status.info.extensions.join(' ')).toMatch(/vector/);
    expect(status.dataBytes).toBeGreaterThan(1_000_000);
    const down = await cli('db', 'down');
    expect(down.stdout).toMatch(/stopped/);
    expect(readFileSync(paths.logFile, 'utf8')).toMatch(/stopped cleanly/);
    expect(readPid(paths.pidFile)).toBeNull();
    expect(await probe(paths.socket)).toBe(false);
    const stopped = JSON.parse((await cli('db', 'status', '--json')).stdout);
    expect(stopped.running).toBe(false);
    const again = await cli('db', 'up');
    expect(again.stdout).toMatch(/database started/);
    expect((await cli('db', 'up')).stdout).toMatch(/already running/);
  }, 240_000);
});
