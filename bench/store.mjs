#!/usr/bin/env node
// The store, embedded PGlite server over a real Postgres server, measured side by side in one run:
//   1. recording throughput: 8 writer processes recording calls at once (rows/s);
//   2. recall latency over 10,000 resolved lessons: the store's lexical recall rung (text mode,
//      pg_trgm on the signature) and a plain trigram query (same SQL on both). bench/recall.mjs
//      measures the whole recall ladder in every mode, with the query plans.
// Run after `npm run build`, with a server to compare against:
//   CHALK_BENCH_PG_URL=postgresql://user:pw@127.0.0.1:5432/db node bench/store.mjs [calls-per-writer] [queries]
// (CHALK_TEST_PG_URL is used when CHALK_BENCH_PG_URL is unset; the role needs CREATEDB: a
// scratch database is made and dropped.) Prints ratios embedded/server; higher latency ratio = slower.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const dist = join(import.meta.dirname, '..', 'dist');
const { PgStore, embeddedPathsIn, stopEmbedded } = await import(join(dist, 'core/store/index.js'));

const WRITERS = 8;

if (process.argv[2] === '--writer') {
  // Child mode: open the store like any chalk process, say ready, wait for "go", record, report.
  // The target comes through the environment: a server URL carries a password, never put in argv.
  const [count, target] = [Number(process.argv[3]), JSON.parse(process.env.CHALK_BENCH_TARGET ?? '')];
  const store = await PgStore.open(target, 300_000);
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  for (let i = 0; i < count; i++) {
    await store.calls.record({
      repo: 'bench',
      ticket: `PROJ-${i % 50}`,
      branch: 'b',
      loop: i,
      kind: 'continue',
      agentStatus: 'ok',
      rubricExit: 1,
      progressed: false,
      model: 'm',
      prompts: 'abcd1234',
      costUsd: 0.0123,
      budgetUsd: 1,
      durationS: 12,
      inputTokens: 1000,
      outputTokens: 200,
      cacheReadTokens: 5000,
      cacheWriteTokens: 100,
      turns: 7,
      denials: 0,
      lessons: 2,
      runId: `PROJ-1-${i}`,
      testsHash: 'h',
      failing: 3,
      failingTests: ['a::b', 'a::c', 'd::e'],
      firstError: 'AssertionError: expected 1 to equal 2',
      treeId: 't',
      verdict: 'spinning',
      fpRules: 'shadow',
    });
  }
  process.stdout.write('done\n');
  await store.close();
  process.exit(0);
}

const perWriter = Number(process.argv[2] ?? 500);
const queries = Number(process.argv[3] ?? 40);
const serverUrl = process.env.CHALK_BENCH_PG_URL || process.env.CHALK_TEST_PG_URL;
if (!serverUrl) {
  process.stderr.write('set CHALK_BENCH_PG_URL (or CHALK_TEST_PG_URL) to a Postgres server to compare with\n');
  process.exit(2);
}

// --- the two databases -------------------------------------------------------------------
const state = mkdtempSync(join(tmpdir(), 'chalk-bench-store-'));
const embedded = { kind: 'embedded', paths: embeddedPathsIn(join(state, 'chalk', 'db')) };
const dbName = `chalk_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(serverUrl);
u.pathname = `/${dbName}`;
const server = { kind: 'server', url: u.toString() };

async function cleanup() {
  await stopEmbedded(embedded.paths).catch(() => {});
  rmSync(state, { recursive: true, force: true });
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
}

try {
  process.stderr.write('starting the embedded server (a first start makes the database)...\n');
  const stores = { embedded: await PgStore.open(embedded, 300_000), server: await PgStore.open(server, 60_000) };

  // --- 1. recording throughput ----------------------------------------------------------
  async function throughput(target) {
    const kids = Array.from({ length: WRITERS }, () =>
      spawn(process.execPath, [import.meta.filename, '--writer', String(perWriter)], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, CHALK_BENCH_TARGET: JSON.stringify(target) },
      }),
    );
    const line = (kid, want) =>
      new Promise((resolve, reject) => {
        let buf = '';
        const on = (d) => {
          buf += d;
          if (buf.includes(`${want}\n`)) {
            kid.stdout.off('data', on);
            resolve();
          }
        };
        kid.stdout.setEncoding('utf8').on('data', on);
        kid.once('exit', (code) => code !== 0 && reject(new Error(`writer exited ${code}`)));
      });
    await Promise.all(kids.map((k) => line(k, 'ready')));
    const t0 = performance.now();
    const done = Promise.all(kids.map((k) => line(k, 'done')));
    for (const k of kids) k.stdin.end('go\n');
    await done;
    return (WRITERS * perWriter) / ((performance.now() - t0) / 1000);
  }
  const rate = { embedded: [], server: [] };
  for (let round = 0; round < 2; round++) {
    for (const name of ['embedded', 'server'])
      rate[name].push(await throughput(name === 'embedded' ? embedded : server));
  }
  const best = (xs) => Math.max(...xs);

  // --- 2. recall latency over 10,000 lessons --------------------------------------------
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const errors = ['TypeError', 'AssertionError', 'ReferenceError', 'ECONNREFUSED', 'SyntaxError', 'panic', 'KeyError'];
  // Lessons as varied as real failures: 3,000 made-up identifiers, a few words each.
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pra', 'gel', 'dor', 'fin', 'qu', 'zed', 'bri', 'tom'];
  const words = Array.from({ length: 3000 }, () =>
    Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => pick(syl)).join(''),
  );
  const phrases = [
    'is undefined',
    'expected 200 got 500',
    'not found',
    'timed out',
    'cannot read id',
    'mismatch',
    'already exists',
    'permission denied',
  ];
  const sentence = () =>
    `${pick(errors)}: ${pick(words)}.${pick(words)} ${pick(phrases)} (${pick(words)} ${pick(words)}) in ${pick(words)}/${pick(words)}.ts`;
  const vec = () => {
    const v = Array.from({ length: 384 }, () => rnd() - 0.5);
    const n = Math.hypot(...v);
    return v.map((x) => Number((x / n).toFixed(6)));
  };
  const N = 10_000;
  const lessons = Array.from({ length: N }, () => ({ text: sentence(), emb: vec() }));
  async function load(store) {
    const vector = (await store.info()).semanticRecall;
    for (let i = 0; i < N; i += 500) {
      const part = lessons.slice(i, i + 500);
      await store.pool.query(
        `INSERT INTO lessons (repo, ticket, signature, first_error, resolution, lesson, resolved_by, resolved_at, scope, embedding)
         SELECT 'bench', 'PROJ-' || g, s, s, 'fixed', 'lesson text', 'bench', now(), 'repo', e::${vector ? 'vector' : 'real[]'}
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(s, e, g)`,
        [part.map((l) => l.text), part.map((l) => (vector ? `[${l.emb.join(',')}]` : `{${l.emb.join(',')}}`))],
      );
    }
    await store.pool.query('ANALYZE lessons');
  }
  process.stderr.write(`recording done; loading 10,000 lessons into each...\n`);
  await load(stores.embedded);
  await load(stores.server);

  process.stderr.write('querying...\n');
  const probes = Array.from({ length: queries }, () => ({ text: sentence(), emb: vec() }));
  const trigramOnly = (store, text) =>
    store.pool.query(
      `SELECT id FROM lessons WHERE resolved_at IS NOT NULL AND repo = $1 AND (signature % $2 OR first_error % $2)
       ORDER BY GREATEST(similarity(signature, $2), similarity(first_error, $2)) DESC LIMIT 5`,
      ['bench', text],
    );
  const lat = { recall: { embedded: [], server: [] }, trigram: { embedded: [], server: [] } };
  for (const [i, p] of probes.entries()) {
    for (const name of i % 2 ? ['embedded', 'server'] : ['server', 'embedded']) {
      let t0 = performance.now();
      const got = await stores[name].lessons.lexical({
        repo: 'bench',
        mode: 'text',
        query: p.text,
        firstError: null,
        limit: 5,
      });
      lat.recall[name].push(performance.now() - t0);
      if (got.length === 0) throw new Error(`${name}: recall found nothing`);
      t0 = performance.now();
      await trigramOnly(stores[name], p.text);
      lat.trigram[name].push(performance.now() - t0);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const info = { embedded: await stores.embedded.info(), server: await stores.server.info() };
  await stores.embedded.close();
  await stores.server.close();

  const f = (x) => x.toFixed(1);
  const out = [
    `store bench: embedded PGlite ${info.embedded.serverVersion} (pgvector ${info.embedded.semanticRecall ? 'yes' : 'no'}) vs Postgres server ${info.server.serverVersion} (pgvector ${info.server.semanticRecall ? 'yes' : 'no'})`,
    `recording, ${WRITERS} writer processes x ${perWriter} calls (best of 2):`,
    `  embedded ${f(best(rate.embedded))} rows/s, server ${f(best(rate.server))} rows/s, embedded/server ${(best(rate.embedded) / best(rate.server)).toFixed(2)}x`,
    `recall top-5 over ${N} resolved lessons, median of ${queries}:`,
    `  store lexical recall: embedded ${f(median(lat.recall.embedded))} ms, server ${f(median(lat.recall.server))} ms, embedded/server ${(median(lat.recall.embedded) / median(lat.recall.server)).toFixed(2)}x`,
    `  trigram part alone (same SQL): embedded ${f(median(lat.trigram.embedded))} ms, server ${f(median(lat.trigram.server))} ms, embedded/server ${(median(lat.trigram.embedded) / median(lat.trigram.server)).toFixed(2)}x`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await cleanup();
}
