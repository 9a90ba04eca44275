#!/usr/bin/env node
// The report card over a year of a busy team's telemetry, timed on both stores in one run:
// 1,000,000 runs rows on a Postgres server and 100,000 on the embedded PGlite store (with
// the events, lessons and decisions that go with them: tests/fixtures/telemetry-seed.sql),
// then `chalk dashboard --all --no-open --output FILE` against each, as a person runs it (the
// real CLI, start-up included), over the whole year (--days 366) and the default 30 days.
// The server store is vacuumed and analyzed after seeding, as autovacuum keeps a year-old database.
// Each window is built three times; prints the median (and the three) and page size per backend and
// window, against the floor measured in the same run: a
// plain query on the daily rollup (the year's calls and spend from report_calls, through a new
// connection, as a process would), and issue 23's target (the year's card on the server in at most 3 s).
// Run after `npm run build`:
//   CHALK_BENCH_PG_URL=postgresql://user:pw@127.0.0.1:5432/db node bench/dashboard.mjs [server-rows] [embedded-rows]
// (CHALK_TEST_PG_URL is used when CHALK_BENCH_PG_URL is unset; the role needs CREATEDB: a
// scratch database is made and dropped.) Each build is stopped after CHALK_BENCH_TIMEOUT_S
// (default 300) seconds; the scratch database, the embedded server and its state dir go at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const { PgStore, embeddedPathsIn, stopEmbedded } = await import(join(dist, 'core/store/index.js'));

const count = (arg, dflt) => {
  const n = Number(arg ?? dflt);
  if (!Number.isSafeInteger(n) || n < 50) {
    process.stderr.write(`row counts must be whole numbers of at least 50, not ${arg}\n`);
    process.exit(2);
  }
  return n;
};
const serverRows = count(process.argv[2], 1_000_000);
const embeddedRows = count(process.argv[3], 100_000);
const timeoutS = Number(process.env.CHALK_BENCH_TIMEOUT_S ?? 300);
const serverUrl = process.env.CHALK_BENCH_PG_URL || process.env.CHALK_TEST_PG_URL;
if (!serverUrl) {
  process.stderr.write('set CHALK_BENCH_PG_URL (or CHALK_TEST_PG_URL) to a Postgres server\n');
  process.exit(2);
}
const seedSql = (rows) =>
  readFileSync(join(root, 'tests', 'fixtures', 'telemetry-seed.sql'), 'utf8').replaceAll('{{RUNS}}', String(rows));

// --- the two databases -------------------------------------------------------------------
const state = mkdtempSync(join(tmpdir(), 'chalk-bench-dashboard-'));
const embedded = { kind: 'embedded', paths: embeddedPathsIn(join(state, 'chalk', 'db')) };
const dbName = `chalk_bench_dash_${process.pid}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(serverUrl);
u.pathname = `/${dbName}`;
const server = { kind: 'server', url: u.toString() };

let cleaning;
/** Stops the embedded server, removes its state dir and drops the scratch database; once. */
function cleanup() {
  cleaning ??= (async () => {
    await stopEmbedded(embedded.paths).catch(() => {});
    rmSync(state, { recursive: true, force: true });
    await admin
      .query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
      .catch((err) => process.stderr.write(`could not drop the scratch database ${dbName}: ${err.message}\n`));
    await admin.end();
  })();
  return cleaning;
}
// Stopped (Ctrl-C, timeout): clean up all the same.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: cleaning up\n`);
    cleanup().finally(() => process.exit(code));
  });
}

/** Runs the built CLI with a clean CHALK_* environment plus `env`; rejects on a non-zero exit or the time limit. */
function chalk(args, env) {
  const base = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHALK_')) base[k] = v;
  return new Promise((resolve, reject) => {
    const kid = spawn(process.execPath, [join(dist, 'cli', 'main.js'), ...args], {
      cwd: state,
      env: { ...base, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    kid.stdout.on('data', (d) => {
      out += d;
    });
    kid.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => kid.kill('SIGTERM'), timeoutS * 1000);
    kid.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(
          new Error(`chalk ${args.join(' ')}: ${signal ? `stopped after ${timeoutS} s` : `exit ${code}`}\n${out}`),
        );
    });
  });
}

const secs = (t0) => (performance.now() - t0) / 1000;

try {
  process.stderr.write('starting the embedded server (a first start makes the database)...\n');
  const stores = { server: await PgStore.open(server, 60_000), embedded: await PgStore.open(embedded, 300_000) };
  const rows = { server: serverRows, embedded: embeddedRows };
  const seeded = {};
  for (const name of ['server', 'embedded']) {
    process.stderr.write(`seeding ${rows[name].toLocaleString('en')} runs rows on the ${name} store...\n`);
    const t0 = performance.now();
    await stores[name].pool.query(seedSql(rows[name]));
    seeded[name] = secs(t0);
  }
  // A server's tables as autovacuum keeps them in a year of use (the visibility map set, statistics
  // read), and no autovacuum of the fresh rows running beside the timed commands. The embedded store
  // has no autovacuum: its tables stay as seeded (analyzed, as the card keeps them: core/store/freshen.ts).
  process.stderr.write('vacuuming the server store, as autovacuum would...\n');
  const tv = performance.now();
  await stores.server.pool.query('VACUUM (ANALYZE)');
  const vacuumed = secs(tv);
  const counts = {};
  for (const name of ['server', 'embedded']) {
    const r = await stores[name].pool.query(
      `SELECT (SELECT count(*) FROM runs)::int AS runs, (SELECT count(*) FROM events)::int AS events,
        (SELECT count(*) FROM lessons)::int AS lessons, (SELECT count(*) FROM decisions)::int AS decisions`,
    );
    counts[name] = r.rows[0];
    await stores[name].close();
  }

  // The floor: one plain query on the daily rollup, the year's calls and spend (the median of five).
  const FLOOR_SQL = `SELECT sum(n) AS calls, sum(cost) AS cost FROM report_calls
    WHERE every AND day >= (now() - interval '366 days')::date`;
  const floor = {};
  for (const name of ['server', 'embedded']) {
    const store = await PgStore.open(name === 'server' ? server : embedded, 60_000);
    const times = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await store.pool.query(FLOOR_SQL);
      times.push(secs(t0));
    }
    await store.close();
    floor[name] = times.sort((a, b) => a - b)[2];
  }

  // The year (every row) and the default window (30 days), each as a person runs it.
  const windows = { year: ['--all', '--days', '366'], month: ['--all'] };
  const built = { server: {}, embedded: {} };
  for (const name of ['server', 'embedded']) {
    const env =
      name === 'server' ? { CHALK_DATABASE_URL: server.url } : { XDG_STATE_HOME: state, CHALK_DATABASE_URL: '' };
    for (const [w, args] of Object.entries(windows)) {
      const output = join(state, `dashboard-${name}-${w}.html`);
      process.stderr.write(`building the page from the ${name} store (${args.join(' ')}), three times...\n`);
      const times = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await chalk(['dashboard', ...args, '--no-open', '--output', output], env);
        times.push(secs(t0));
      }
      // The median of three, and the three as they came (the first also reads what the others find cached).
      built[name][w] = { s: [...times].sort((a, b) => a - b)[1], all: times, kb: statSync(output).size / 1024 };
    }
  }

  const f = (x) => x.toFixed(2);
  const n = (x) => x.toLocaleString('en');
  const line = (name, label) =>
    `  ${label}, ${n(counts[name].runs)} runs, ${n(counts[name].events)} events, ${n(counts[name].lessons)} lessons, ` +
    `${n(counts[name].decisions)} decisions (seeded in ${f(seeded[name])} s):\n` +
    `    floor (a plain query on the daily rollup): ${(floor[name] * 1000).toFixed(0)} ms\n` +
    `    --days 366 (every row): ${f(built[name].year.s)} s (${(built[name].year.s / floor[name]).toFixed(0)}x the floor; runs ${built[name].year.all.map(f).join(', ')} s), page ${built[name].year.kb.toFixed(0)} KiB\n` +
    `    default --days 30:      ${f(built[name].month.s)} s (${(built[name].month.s / floor[name]).toFixed(0)}x the floor; runs ${built[name].month.all.map(f).join(', ')} s), page ${built[name].month.kb.toFixed(0)} KiB`;
  const target = built.server.year.s <= 3;
  process.stdout.write(
    `${[
      'dashboard bench: chalk dashboard --all --no-open, the real CLI, start-up included',
      line('server', 'Postgres server'),
      `    (VACUUM (ANALYZE) after seeding, as autovacuum would: ${f(vacuumed)} s)`,
      line('embedded', 'embedded PGlite'),
      `issue 23's target, the year's card over ${n(counts.server.runs)} runs on the server in at most 3 s: ${target ? 'met' : 'NOT met'} (${f(built.server.year.s)} s)`,
    ].join('\n')}\n`,
  );
} finally {
  await cleanup();
}
