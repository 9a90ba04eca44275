import { join } from 'node:path';
import pg from 'pg';

const { PgStore } = await import('/work/wt/memory/dist/core/store/index.js');
const { lexicalParts } = await import('/work/wt/memory/dist/core/store/lessons.js');
const url0 = process.env.CHALK_TEST_PG_URL;
const admin = new pg.Client({ connectionString: url0 });
await admin.connect();
const name = `chalk_diag_${process.pid}`;
await admin.query(`CREATE DATABASE ${name}`);
const u = new URL(url0);
u.pathname = `/${name}`;
const store = await PgStore.open({ kind: 'server', url: u.toString() }, 60000);
const pool = store.pool;
await pool.query(
  `INSERT INTO lessons (repo, ticket, signature, first_error, fingerprint, scope, resolution, lesson, resolved_by, resolved_at)
         SELECT CASE WHEN g % 10 = 0 THEN 'other' ELSE 'plan' END, 'PROJ-' || g,
                'rubric failed (exit 1)' || chr(10) || md5(g::text) || ' ' || md5((g + 1)::text) || ' at line ' || g,
                CASE WHEN g % 3 = 0 THEN NULL ELSE 'Error ' || md5((g * 7)::text) || ' in ' || md5((g * 3)::text) END,
                md5((g * 11)::text), (ARRAY['repo', 'general', 'none'])[g % 3 + 1], 'note', 'lesson', 'me', now()
         FROM generate_series(1, 10000) g`,
);
await pool.query('ANALYZE lessons');
const E = 'Error: connect ECONNREFUSED 127.0.0.1:6379 at redis client';
const SPEC =
  '# SHOP-3 cache\nThe product page reads prices through the cache. When the cache is down the page must still load.\n- [ ] prices load when redis refuses connections';
const FEEDBACK =
  'rubric failed (exit 2)\nnpm ERR! missing script: test\nlast 20 lines of output:\nnpm ERR! A complete log of this run can be found in /home/chalk/.npm/_logs';
for (const seqoff of [false, true])
  for (const k of [
    { repo: 'plan', mode: 'failure', query: E + '\nt', firstError: E, limit: 3 },
    { repo: 'plan', mode: 'spec', query: SPEC, firstError: null, limit: 3 },
    { repo: 'plan', mode: 'text', query: FEEDBACK, firstError: null, limit: 3 },
  ]) {
    const c = await pool.connect();
    await c.query('BEGIN');
    if (seqoff) await c.query('SET LOCAL enable_seqscan = off');
    for (const p of lexicalParts(k)) {
      if (typeof p.threshold === 'number')
        await c.query(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(p.threshold)]);
      else await c.query(`SELECT set_config('pg_trgm.similarity_threshold', ${p.threshold}, true)`, [p.params[1]]);
      const r = await c.query(`EXPLAIN ANALYZE ${p.sql}`, p.params);
      const lines = r.rows
        .map((x) => x['QUERY PLAN'])
        .filter((l) => /Scan|Execution|cost/.test(l))
        .map((l) => l.slice(0, 160));
      console.log('seqoff', seqoff, k.mode, '\n ', lines.join('\n  '));
    }
    await c.query('ROLLBACK');
    c.release();
  }
await store.close();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
