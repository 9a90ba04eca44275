#!/usr/bin/env node
// Lesson recall latency, embedded PGlite server and a Postgres server side by side in one run:
// the recall ladder (exact fingerprint, then pg_trgm) as a loop asks it, in each recall mode
// (failure, spec, text), at 1,000 and at 10,000 resolved lessons, with each statement's query plan
// (which index it uses; a sequential scan on lessons is what recall must never do).
// Run after `npm run build`:
//   CHALK_BENCH_PG_URL=postgresql://user:pw@127.0.0.1:5432/db node bench/recall.mjs [queries]
// (CHALK_TEST_PG_URL is used when CHALK_BENCH_PG_URL is unset; the role needs CREATEDB: a scratch
// database is made and dropped.) Prints median and p95 per mode, and the 10,000/1,000 ratio.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const dist = join(import.meta.dirname, '..', 'dist');
const { PgStore, embeddedPathsIn, stopEmbedded } = await import(join(dist, 'core/store/index.js'));
const { LadderMemory } = await import(join(dist, 'core/memory/memory.js'));
const { storeLadder } = await import(join(dist, 'core/memory/rungs.js'));

const queries = Number(process.argv[2] ?? 30);
const serverUrl = process.env.CHALK_BENCH_PG_URL || process.env.CHALK_TEST_PG_URL;
if (!serverUrl) {
  process.stderr.write('set CHALK_BENCH_PG_URL (or CHALK_TEST_PG_URL) to a Postgres server to compare with\n');
  process.exit(2);
}

// --- made-up lessons as varied as real failures -----------------------------------------
let seed = 7;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const hex = () => Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(rnd() * 16)]).join('');
const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pra', 'gel', 'dor', 'fin', 'qu', 'zed', 'bri', 'tom'];
const words = Array.from({ length: 3000 }, () =>
  Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => pick(syl)).join(''),
);
const errors = ['TypeError', 'AssertionError', 'ReferenceError', 'ECONNREFUSED', 'SyntaxError', 'panic', 'KeyError'];
const phrases = ['is undefined', 'expected 200 got 500', 'not found', 'timed out', 'cannot read id', 'mismatch'];
const sentence = () =>
  `${pick(errors)}: ${pick(words)}.${pick(words)} ${pick(phrases)} (${pick(words)} ${pick(words)}) in ${pick(words)}/${pick(words)}.ts`;
const test = () => `tests/${pick(words)}.test.ts > ${pick(words)} ${pick(words)}`;
const english = [
  'the',
  'service',
  'should',
  'return',
  'a',
  'list',
  'of',
  'orders',
  'when',
  'user',
  'asks',
  'for',
  'page',
];
const prose = (n) => Array.from({ length: n }, () => pick(english)).join(' ');
function lesson() {
  const firstError = rnd() < 0.7 ? sentence() : null;
  const lines = Array.from({ length: 12 }, () =>
    rnd() < 0.3 ? sentence() : `  at ${pick(words)} (${pick(words)}.ts:${Math.floor(rnd() * 400)})`,
  );
  return {
    repo: rnd() < 0.9 ? 'bench' : 'elsewhere',
    signature: `rubric failed (exit 1)\n${firstError ?? ''}\n${lines.join('\n')}`,
    firstError,
    fingerprint: hex(),
    scope: pick(['repo', 'general', 'none', null]),
  };
}

async function load(store, n) {
  for (let i = 0; i < n; i += 500) {
    const part = Array.from({ length: Math.min(500, n - i) }, lesson);
    await store.pool.query(
      `INSERT INTO lessons (repo, ticket, signature, first_error, fingerprint, scope, resolution, lesson, resolved_by, resolved_at)
       SELECT r, 'PROJ-' || g, s, e, f, sc, 'fixed it by hand', 'When this fails, do that, because.', 'bench', now()
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(r, s, e, f, sc, g)`,
      [
        part.map((l) => l.repo),
        part.map((l) => l.signature),
        part.map((l) => l.firstError),
        part.map((l) => l.fingerprint),
        part.map((l) => l.scope),
      ],
    );
  }
  await store.pool.query('ANALYZE lessons');
}

/** One recall key per mode, like a loop's, some near a stored lesson (the fingerprint of one in failure mode). */
async function keys(store) {
  const some = (
    await store.pool.query(
      `SELECT fingerprint, first_error FROM lessons WHERE repo = 'bench' AND first_error IS NOT NULL ORDER BY random() LIMIT $1`,
      [queries],
    )
  ).rows;
  return some.map((row, i) => {
    const e = i % 2 ? row.first_error : sentence();
    const tests = [test(), test()];
    return {
      failure: {
        repo: 'bench',
        mode: 'failure',
        query: [e, ...tests].join('\n'),
        fingerprint: i % 3 ? row.fingerprint : hex(),
        firstError: e,
      },
      spec: {
        repo: 'bench',
        mode: 'spec',
        query: `# PROJ-9\n${prose(250)}\nWhen it fails with ${i % 2 ? row.first_error : sentence()}, ${prose(60)}\n- [ ] ${prose(12)}`,
        fingerprint: null,
        firstError: null,
      },
      text: {
        repo: 'bench',
        mode: 'text',
        query: `rubric failed (exit 1)\nfailing tests: unknown\n${sentence()}\n${prose(40)}`,
        fingerprint: null,
        firstError: null,
      },
    };
  });
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const f = (x) => x.toFixed(1);

async function measure(store) {
  const memory = new LadderMemory(storeLadder(store));
  const ks = await keys(store);
  const out = {};
  for (const mode of ['failure', 'spec', 'text']) {
    for (const k of ks.slice(0, 3)) await memory.recall(k[mode]); // warm
    const lat = [];
    let found = 0;
    for (const k of ks) {
      const t0 = performance.now();
      found += (await memory.recall(k[mode])).length;
      lat.push(performance.now() - t0);
    }
    const k = ks[0][mode];
    const plans = await store.explainRecall({ ...k, limit: 3 });
    const uses = plans.map((p) => {
      const idx = [
        ...p.plan.matchAll(/(?:Bitmap Index Scan|Index Scan(?: Backward)?|Index Only Scan) (?:using|on) (\w+)/g),
      ].map((m) => m[1]);
      const seq = /Seq Scan on lessons/.test(p.plan);
      return `${p.rung}: ${seq ? 'SEQ SCAN on lessons' : [...new Set(idx)].join('+') || 'no index?'}`;
    });
    process.stderr.write(`  ${mode}: ${lat.length} recalls, median ${f(pct(lat, 0.5))} ms\n`);
    out[mode] = {
      median: pct(lat, 0.5),
      p95: pct(lat, 0.95),
      found: found / ks.length,
      uses,
      seq: plans.some((p) => /Seq Scan on lessons/.test(p.plan)),
    };
  }
  return out;
}

const state = mkdtempSync(join(tmpdir(), 'chalk-bench-recall-'));
const embedded = { kind: 'embedded', paths: embeddedPathsIn(join(state, 'chalk', 'db')) };
const dbName = `chalk_bench_recall_${process.pid}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(serverUrl);
u.pathname = `/${dbName}`;
const server = { kind: 'server', url: u.toString() };
let failed = false;
try {
  process.stderr.write('starting the embedded server (a first start makes the database)...\n');
  const stores = { embedded: await PgStore.open(embedded, 300_000), server: await PgStore.open(server, 60_000) };
  const results = {};
  let have = 0;
  for (const n of [1_000, 10_000]) {
    process.stderr.write(`loading to ${n} resolved lessons...\n`);
    for (const name of ['embedded', 'server']) {
      const t0 = performance.now();
      await load(stores[name], n - have);
      process.stderr.write(`  ${name}: loaded in ${f((performance.now() - t0) / 1000)} s\n`);
    }
    have = n;
    for (const name of ['embedded', 'server']) {
      process.stderr.write(`measuring ${name} at ${n}...\n`);
      results[`${name} ${n}`] = await measure(stores[name]);
    }
  }
  const info = { embedded: await stores.embedded.info(), server: await stores.server.info() };
  await stores.embedded.close();
  await stores.server.close();
  const lines = [
    `recall bench: embedded PGlite ${info.embedded.serverVersion} vs Postgres server ${info.server.serverVersion}; ${queries} recalls per mode, ms (median / p95), lessons found per recall`,
  ];
  for (const name of ['embedded', 'server']) {
    for (const mode of ['failure', 'spec', 'text']) {
      const a = results[`${name} 1000`][mode];
      const b = results[`${name} 10000`][mode];
      failed ||= a.seq || b.seq;
      lines.push(
        `  ${name.padEnd(8)} ${mode.padEnd(7)} 1,000: ${f(a.median)} / ${f(a.p95)} (${a.found.toFixed(1)})   10,000: ${f(b.median)} / ${f(b.p95)} (${b.found.toFixed(1)})   10k/1k ${(b.median / a.median).toFixed(2)}x`,
        `           plan at 10,000: ${b.uses.join('; ')}`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await stopEmbedded(embedded.paths).catch(() => {});
  rmSync(state, { recursive: true, force: true });
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  await admin.end();
}
if (failed) {
  process.stderr.write('a recall statement scans lessons sequentially\n');
  process.exit(1);
}
