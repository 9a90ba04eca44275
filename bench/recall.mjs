#!/usr/bin/env node
// Lesson recall latency, embedded PGlite server and a Postgres server side by side in one run:
// the recall ladder (exact fingerprint, then pg_trgm) as a loop asks it, in each recall mode
// (failure, spec, text), on a varied corpus at 1,000 and 10,000 resolved lessons and on the uniform
// worst case at 10,000 (see "made-up lessons"), with each statement's query plan (which index it
// uses; a sequential scan on lessons is what recall must never do).
// Run after `npm run build`:
//   CHALK_BENCH_PG_URL=postgresql://user:pw@127.0.0.1:5432/db node bench/recall.mjs [queries]
// (CHALK_TEST_PG_URL is used when CHALK_BENCH_PG_URL is unset; the role needs CREATEDB: a scratch
// database is made and dropped.) Prints median and p95 per mode, the varied corpus's 10,000/1,000 ratio, and
// each median at the largest size against its floor measured in the same run (one primary-key probe of
// lessons through the same pool) and issue 23's target (100 ms embedded, 50 ms server).
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

// --- made-up lessons ------------------------------------------------------------------------
// Two corpora. `varied`, as real detentions are: many error kinds and messages, identifiers and
// paths from a large vocabulary, stack traces and test output of varied length (a few signatures
// too long for the nearest-neighbour index). `uniform`, the worst case kept from the first bench:
// words from 16 syllables and a 13-word English, so every lesson shares trigrams with every query,
// and a generator whose floating-point overflow repeats lessons every 75, so scores tie.
let seed = 7;
/** mulberry32: a 32-bit generator with no float overflow. */
const rnd32 = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/** The first bench's generator (seed * 1103515245 overflows a double's exact integers: it cycles). */
const rndOld = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
let rnd = rnd32;
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const int = (n) => Math.floor(rnd() * n);
const hex = (n = 64) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');

function variedCorpus() {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const word = () => Array.from({ length: 3 + int(8) }, () => letters[int(26)]).join('');
  const vocab = Array.from({ length: 20_000 }, word);
  const w = () => pick(vocab);
  const camel = () => w() + w().replace(/^./, (c) => c.toUpperCase());
  const path = () =>
    `${pick(['src', 'lib', 'app', 'packages', 'internal', 'cmd', 'tests'])}/${w()}/${camel()}.${pick(['ts', 'js', 'py', 'go', 'rs', 'rb'])}`;
  const english = Array.from({ length: 600 }, word);
  const messages = [
    () => `TypeError: Cannot read properties of undefined (reading '${camel()}')`,
    () => `AssertionError: expected ${int(1000)} to equal ${int(1000)}`,
    () => `AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal: ${camel()}`,
    () => `ReferenceError: ${camel()} is not defined`,
    () => `Error: connect ECONNREFUSED 127.0.0.1:${1000 + int(60000)}`,
    () => `Error: ENOENT: no such file or directory, open '${path()}'`,
    () => `SyntaxError: Unexpected token '${pick(['}', ')', '<', 'export', 'import'])}' in ${path()}`,
    () => `panic: runtime error: index out of range [${int(50)}] with length ${int(50)}`,
    () => `KeyError: '${w()}_${w()}'`,
    () => `AttributeError: module '${w()}' has no attribute '${w()}'`,
    () => `ModuleNotFoundError: No module named '${w()}.${w()}'`,
    () => `Error: Timeout of ${pick([2000, 5000, 10000])}ms exceeded in ${camel()}`,
    () => `thread 'main' panicked at '${w()} ${w()}', ${path()}:${int(900)}:${int(80)}`,
    () => `java.lang.NullPointerException: Cannot invoke "${camel()}.${camel()}()" because "${w()}" is null`,
    () =>
      `FAIL ${path()} > ${w()} ${w()} ${w()}: expected status ${pick([200, 201, 204])} got ${pick([400, 404, 500, 503])}`,
    () => `error[E0${int(800)}]: mismatched types: expected \`${camel()}\`, found \`${camel()}\``,
  ];
  const sentence = () => pick(messages)();
  const frame = () =>
    pick([
      () => `    at ${camel()} (${path()}:${int(900)}:${int(80)})`,
      () => `  File "${path()}", line ${int(900)}, in ${w()}_${w()}`,
      () => `    ${path()}:${int(900)} +0x${hex(3)}`,
      () => ` ✓ ${path()} > ${w()} ${w()} (${int(300)} ms)`,
      () => ` × ${path()} > ${w()} ${w()} ${w()}`,
      () => `npm ERR! ${w()} ${w()} ${w()}`,
      () => `${w()} ${w()} ${w()} ${w()} ${w()} ${w()}`,
    ])();
  const prose = (n) => Array.from({ length: n }, () => pick(english)).join(' ');
  const test = () => `${path()} > ${w()} ${w()}`;
  return {
    sentence,
    prose,
    test,
    tail: () => {
      // 5-40 lines (a signature keeps the rubric's last 40); 1 in 100 is 40 lines of dumped data,
      // over 2,000 distinct trigrams: too many for the nearest-neighbour index.
      if (rnd() < 0.01) return Array.from({ length: 40 }, () => Array.from({ length: 40 }, w).join(',')).join('\n');
      return Array.from({ length: 5 + int(36) }, () => (rnd() < 0.15 ? sentence() : frame())).join('\n');
    },
    reason: () =>
      pick([`rubric failed (exit ${1 + int(3)})`, 'no progress in 3 loops', 'review found blockers', 'budget spent']),
    // Retry feedback: the rubric's exit, the failing tests, its last lines (half of them after a stored first error).
    feedback: (seen) =>
      `rubric failed (exit 1)\nfailing tests: ${test()}\nlast 20 lines of output:\n${seen ?? sentence()}\n${Array.from({ length: 19 }, frame).join('\n')}`,
  };
}

function uniformCorpus() {
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pra', 'gel', 'dor', 'fin', 'qu', 'zed', 'bri', 'tom'];
  const words = Array.from({ length: 3000 }, () => Array.from({ length: 2 + int(3) }, () => pick(syl)).join(''));
  const errors = ['TypeError', 'AssertionError', 'ReferenceError', 'ECONNREFUSED', 'SyntaxError', 'panic', 'KeyError'];
  const phrases = ['is undefined', 'expected 200 got 500', 'not found', 'timed out', 'cannot read id', 'mismatch'];
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
  const sentence = () =>
    `${pick(errors)}: ${pick(words)}.${pick(words)} ${pick(phrases)} (${pick(words)} ${pick(words)}) in ${pick(words)}/${pick(words)}.ts`;
  const prose = (n) => Array.from({ length: n }, () => pick(english)).join(' ');
  return {
    sentence,
    prose,
    test: () => `tests/${pick(words)}.test.ts > ${pick(words)} ${pick(words)}`,
    tail: () =>
      Array.from({ length: 12 }, () =>
        rnd() < 0.3 ? sentence() : `  at ${pick(words)} (${pick(words)}.ts:${Math.floor(rnd() * 400)})`,
      ).join('\n'),
    reason: () => 'rubric failed (exit 1)',
    feedback: () => `rubric failed (exit 1)\nfailing tests: unknown\n${sentence()}\n${prose(40)}`,
  };
}

/** The corpus lessons and recall keys are made from (set by `use`). */
let corpus;
function use(name) {
  seed = 7;
  rnd = name === 'uniform' ? rndOld : rnd32;
  corpus = name === 'uniform' ? uniformCorpus() : variedCorpus();
}

function lesson() {
  const firstError = rnd() < 0.7 ? corpus.sentence() : null;
  return {
    repo: rnd() < 0.9 ? 'bench' : 'elsewhere',
    signature: `${corpus.reason()}\n${firstError ?? ''}\n${corpus.tail()}`,
    firstError,
    fingerprint: hex(),
    scope: pick(['repo', 'general', 'none', null]),
  };
}

// The lessons go in with the insert triggers of the bitmaps and of spec mode's anchors off, and both
// are then made afresh in one statement each (chalk_lesson_bits_rebuild, chalk_spec_anchors_rebuild:
// the schema's back-fills): the same bits the trigger keeps (recall-equivalence.test.ts), and anchors
// chosen by the counts of every lesson loaded so far, without merging each batch into the rows the
// last one wrote. What one lesson costs to write through the triggers is measured on its own (writeCost).
async function load(store, n) {
  await store.pool.query('ALTER TABLE lessons DISABLE TRIGGER lesson_bits_insert');
  await store.pool.query('ALTER TABLE lessons DISABLE TRIGGER lesson_spec_anchors_insert');
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
  await store.pool.query('ALTER TABLE lessons ENABLE TRIGGER lesson_bits_insert');
  await store.pool.query('ALTER TABLE lessons ENABLE TRIGGER lesson_spec_anchors_insert');
  await store.pool.query('SELECT chalk_lesson_bits_rebuild()');
  await store.pool.query('SELECT chalk_spec_anchors_rebuild()');
  await store.pool.query('ANALYZE lessons');
}

/** Median ms to write one more lesson through the trigger (a detention's cost), 5 of them, then removed. */
async function writeCost(store) {
  const lat = [];
  const ids = [];
  for (let i = 0; i < 5; i++) {
    const l = lesson();
    const t0 = performance.now();
    const r = await store.pool.query(
      `INSERT INTO lessons (repo, ticket, signature, first_error, fingerprint, scope) VALUES ($1, 'PROJ-W', $2, $3, $4, $5) RETURNING id`,
      [l.repo, l.signature, l.firstError, l.fingerprint, l.scope],
    );
    lat.push(performance.now() - t0);
    ids.push(r.rows[0].id);
  }
  await store.pool.query('DELETE FROM lessons WHERE id = ANY ($1::bigint[])', [ids]);
  return pct(lat, 0.5);
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
    const e = i % 2 ? row.first_error : corpus.sentence();
    const tests = [corpus.test(), corpus.test()];
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
        query: `# PROJ-9\n${corpus.prose(250)}\nWhen it fails with ${i % 2 ? row.first_error : corpus.sentence()}, ${corpus.prose(60)}\n- [ ] ${corpus.prose(12)}`,
        fingerprint: null,
        firstError: null,
      },
      text: {
        repo: 'bench',
        mode: 'text',
        query: corpus.feedback(i % 2 ? row.first_error : null),
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
  // The floor: one index probe (a lesson by its primary key) through the same pool, as many times.
  const ids = (await store.pool.query('SELECT id FROM lessons ORDER BY random() LIMIT $1', [ks.length])).rows;
  const probe = [];
  for (const { id } of [...ids.slice(0, 3), ...ids]) {
    const t0 = performance.now();
    await store.pool.query('SELECT * FROM lessons WHERE id = $1', [id]);
    probe.push(performance.now() - t0);
  }
  const out = { probe: pct(probe.slice(3), 0.5), write: await writeCost(store) };
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

/** Each corpus and the sizes it is measured at; the uniform worst case at 10,000 only. */
const CORPORA = [
  ['varied', [1_000, 10_000]],
  ['uniform', [10_000]],
];

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
  for (const [name, sizes] of CORPORA) {
    use(name);
    let have = 0;
    for (const n of sizes) {
      process.stderr.write(`loading the ${name} corpus to ${n} resolved lessons...\n`);
      for (const where of ['embedded', 'server']) {
        const t0 = performance.now();
        if (have === 0) await stores[where].pool.query('TRUNCATE lessons CASCADE');
        await load(stores[where], n - have);
        process.stderr.write(`  ${where}: loaded in ${f((performance.now() - t0) / 1000)} s\n`);
      }
      have = n;
      for (const where of ['embedded', 'server']) {
        process.stderr.write(`measuring ${where} at ${n}...\n`);
        results[`${where} ${name} ${n}`] = await measure(stores[where]);
      }
    }
  }
  const info = { embedded: await stores.embedded.info(), server: await stores.server.info() };
  await stores.embedded.close();
  await stores.server.close();
  const lines = [
    `recall bench: embedded PGlite ${info.embedded.serverVersion} vs Postgres server ${info.server.serverVersion}; ${queries} recalls per mode, ms (median / p95), lessons found per recall`,
  ];
  const cell = (r) => `${f(r.median)} / ${f(r.p95)} (${r.found.toFixed(1)})`;
  // Issue 23's targets at 10,000 lessons (median): 100 ms embedded, 50 ms on a server.
  const TARGET = { embedded: 100, server: 50 };
  for (const where of ['embedded', 'server']) {
    for (const [name, sizes] of CORPORA) {
      const top = results[`${where} ${name} ${sizes.at(-1)}`];
      lines.push(
        `  ${where.padEnd(8)} ${name.padEnd(7)} floor: one index probe at ${sizes.at(-1).toLocaleString('en')}, ${f(top.probe)} ms; writing one lesson ${f(top.write)} ms`,
      );
      for (const mode of ['failure', 'spec', 'text']) {
        const rs = sizes.map((n) => results[`${where} ${name} ${n}`][mode]);
        failed ||= rs.some((r) => r.seq);
        const at = sizes.map((n, i) => `${n.toLocaleString('en')}: ${cell(rs[i])}`).join('   ');
        const ratio = rs.length > 1 ? `   10k/1k ${(rs[1].median / rs[0].median).toFixed(2)}x` : '';
        const top = rs.at(-1);
        const met = top.median <= TARGET[where] ? 'met' : 'MISSED';
        const floor = `   ${(top.median / results[`${where} ${name} ${sizes.at(-1)}`].probe).toFixed(1)}x the probe, target ${TARGET[where]} ms ${met}`;
        lines.push(
          `  ${where.padEnd(8)} ${name.padEnd(7)} ${mode.padEnd(7)} ${at}${ratio}${floor}`,
          `           plan at ${sizes.at(-1).toLocaleString('en')}: ${rs.at(-1).uses.join('; ')}`,
        );
      }
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
