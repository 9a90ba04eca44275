#!/usr/bin/env node
// What recording one agent call costs (`Store.calls.record`, once per loop of every run), on both
// stores in one run: a store seeded with a year of telemetry (tests/fixtures/telemetry-seed.sql,
// so the report card's rollup has rows to add to), then runs of ten calls each recorded one by one
// as the run loop records them (loops, retries, a review, failing tests, verdicts, a flaky test),
// each call timed. The floor, measured in the same run and alternated with the calls: the same row
// inserted by the same kind of statement into `runs_floor`, a copy of `runs` with its indexes and
// no trigger (what an insert costs before any rollup is kept).
// Run after `npm run build`:
//   CHALK_BENCH_PG_URL=postgresql://user:pw@127.0.0.1:5432/db node bench/record.mjs [calls] [seed-rows]
// (CHALK_TEST_PG_URL is used when CHALK_BENCH_PG_URL is unset; the role needs CREATEDB: a scratch
// database is made and dropped; the embedded server and its state dir go at the end.)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const root = join(import.meta.dirname, '..');
const { PgStore, embeddedPathsIn, stopEmbedded } = await import(join(root, 'dist', 'core/store/index.js'));

const count = (arg, dflt, min) => {
  const n = Number(arg ?? dflt);
  if (!Number.isSafeInteger(n) || n < min) {
    process.stderr.write(`counts must be whole numbers of at least ${min}, not ${arg}\n`);
    process.exit(2);
  }
  return n;
};
const calls = count(process.argv[2], 400, 20);
const seedRows = count(process.argv[3], 20_000, 50);
const serverUrl = process.env.CHALK_BENCH_PG_URL || process.env.CHALK_TEST_PG_URL;
if (!serverUrl) {
  process.stderr.write('set CHALK_BENCH_PG_URL (or CHALK_TEST_PG_URL) to a Postgres server\n');
  process.exit(2);
}

const state = mkdtempSync(join(tmpdir(), 'chalk-bench-record-'));
const embedded = { kind: 'embedded', paths: embeddedPathsIn(join(state, 'chalk', 'db')) };
const dbName = `chalk_bench_record_${process.pid}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(serverUrl);
u.pathname = `/${dbName}`;
const server = { kind: 'server', url: u.toString() };

let cleaning;
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
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: cleaning up\n`);
    cleanup().finally(() => process.exit(code));
  });
}

/** Call i of the bench: run i / 10, loop i % 10 (0: a review outside the loop), as the run loop records them. */
function call(i) {
  const run = Math.floor(i / 10);
  const loop = i % 10;
  const failing = loop > 0 && loop < 8;
  return {
    repo: `bench-${run % 3}`,
    ticket: `BENCH-${run}`,
    branch: `chalk/BENCH-${run}`,
    loop,
    kind: loop === 0 ? 'review' : loop % 3 === 0 ? 'retry' : 'continue',
    agentStatus: loop === 0 ? 'pass' : 'ok',
    rubricExit: failing ? 1 : 0,
    progressed: !failing && loop > 0,
    model: 'claude-sonnet-4-5',
    prompts: 'a1b2c3d4',
    costUsd: 0.05 + (i % 17) * 0.0371,
    budgetUsd: 2,
    durationS: 30 + (i % 50),
    inputTokens: 1000 + i,
    outputTokens: 200 + i,
    cacheReadTokens: 5000,
    cacheWriteTokens: 100,
    turns: 1 + (i % 30),
    denials: i % 23 === 0 ? 1 : 0,
    lessons: loop % 3 === 0 ? 1 : 0,
    runId: `BENCH-${run}-0`,
    testsHash: failing ? `h${i % 4}` : null,
    failing: failing ? 2 : 0,
    failingTests: failing ? [`tests/b${i % 40}.test.ts::case ${loop}`, 'tests/edge.test.ts::edge'] : null,
    firstError: failing ? `AssertionError: expected ${loop} to equal 0` : null,
    treeId: `tree${i}`,
    verdict: failing ? ['first', 'spinning', 'repeat', 'improving', 'deja_vu', 'no_change', 'other'][loop - 1] : null,
    fpRules: 'shadow',
    flakyTests: i % 31 === 0 ? ['tests/flaky.test.ts::sometimes'] : null,
  };
}

/** The floor: the same row's columns as core/store/calls.ts writes them, into runs_floor. */
const FLOOR_COLUMNS = [
  ['repo', (c) => c.repo],
  ['ticket', (c) => c.ticket],
  ['branch', (c) => c.branch],
  ['loop', (c) => c.loop],
  ['kind', (c) => c.kind],
  ['agent_status', (c) => c.agentStatus],
  ['rubric_exit', (c) => c.rubricExit],
  ['progressed', (c) => c.progressed],
  ['model', (c) => c.model],
  ['prompts', (c) => c.prompts],
  ['cost_usd', (c) => c.costUsd],
  ['budget_usd', (c) => c.budgetUsd],
  ['duration_s', (c) => c.durationS],
  ['input_tokens', (c) => c.inputTokens],
  ['output_tokens', (c) => c.outputTokens],
  ['cache_read_tokens', (c) => c.cacheReadTokens],
  ['cache_write_tokens', (c) => c.cacheWriteTokens],
  ['turns', (c) => c.turns],
  ['denials', (c) => c.denials],
  ['lessons', (c) => c.lessons],
  ['run_id', (c) => c.runId],
  ['tests_hash', (c) => c.testsHash],
  ['failing', (c) => c.failing],
  ['failing_tests', (c) => c.failingTests?.join('\n') ?? null],
  ['first_error', (c) => c.firstError],
  ['tree_id', (c) => c.treeId],
  ['verdict', (c) => c.verdict],
  ['fp_rules', (c) => c.fpRules],
  ['flaky_tests', (c) => c.flakyTests?.join('\n') ?? null],
];
const FLOOR_INSERT = `INSERT INTO runs_floor (${FLOOR_COLUMNS.map(([n]) => n).join(', ')})
  VALUES (${FLOOR_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`;

const ms = (t0) => performance.now() - t0;
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

try {
  process.stderr.write('starting the embedded server (a first start makes the database)...\n');
  const result = {};
  for (const [name, target] of [
    ['server', server],
    ['embedded', embedded],
  ]) {
    const store = await PgStore.open(target, 300_000);
    try {
      process.stderr.write(`seeding ${seedRows.toLocaleString('en')} runs rows on the ${name} store...\n`);
      await store.pool.query(
        readFileSync(join(root, 'tests', 'fixtures', 'telemetry-seed.sql'), 'utf8').replaceAll(
          '{{RUNS}}',
          String(seedRows),
        ),
      );
      await store.pool.query('CREATE TABLE runs_floor (LIKE runs INCLUDING ALL)');
      // A few calls first: each connection plans its statements once.
      for (let i = 0; i < 10; i++) {
        await store.calls.record(call(calls + i));
        await store.pool.query(
          FLOOR_INSERT,
          FLOOR_COLUMNS.map(([, get]) => get(call(calls + i))),
        );
      }
      process.stderr.write(`recording ${calls} calls on the ${name} store...\n`);
      const rec = [];
      const floor = [];
      for (let i = 0; i < calls; i++) {
        const c = call(i);
        // Alternated, in both orders, so both see the same load.
        const pair = [
          async () => {
            const t0 = performance.now();
            await store.calls.record(c);
            rec.push(ms(t0));
          },
          async () => {
            const t0 = performance.now();
            await store.pool.query(
              FLOOR_INSERT,
              FLOOR_COLUMNS.map(([, get]) => get(c)),
            );
            floor.push(ms(t0));
          },
        ];
        if (i % 2) pair.reverse();
        for (const f of pair) await f();
      }
      result[name] = { rec, floor };
    } finally {
      await store.close();
    }
  }
  const f = (x) => x.toFixed(2);
  const lines = ['record bench: Store.calls.record, one call at a time, as the run loop records them'];
  for (const [name, { rec, floor }] of Object.entries(result)) {
    const [m, fm] = [quantile(rec, 0.5), quantile(floor, 0.5)];
    const mean = rec.reduce((s, x) => s + x, 0) / rec.length;
    const fmean = floor.reduce((s, x) => s + x, 0) / floor.length;
    lines.push(
      `  ${name === 'server' ? 'Postgres server' : 'embedded PGlite'}, ${calls} calls over ${seedRows.toLocaleString('en')} seeded rows:`,
      `    floor (the same insert into runs without triggers): median ${f(fm)} ms, mean ${f(fmean)} ms`,
      `    record: median ${f(m)} ms (${(m / fm).toFixed(1)}x the floor), p90 ${f(quantile(rec, 0.9))} ms, mean ${f(mean)} ms (${(mean / fmean).toFixed(1)}x)`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await cleanup();
}
