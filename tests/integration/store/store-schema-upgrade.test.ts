import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySchema, PgStore, SCHEMA_VERSION } from '../../../core/store/index.js';
import { BACKENDS, ROOT, rawPool } from './backends.js';
import { FAILURES, schemaShape, seedHistory, storedColumns, tableRows } from './seed.js';

/**
 * A database as an early Chalk left it: no schema version table, runs without the
 * fingerprint columns, lessons without run_id/fingerprint/first_error/scope/embedding,
 * decisions without url, and none of the later indexes.
 */
const OLD_SCHEMA = `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE runs (
  id bigserial PRIMARY KEY, repo text NOT NULL, ticket text NOT NULL, branch text NOT NULL, loop int NOT NULL,
  kind text NOT NULL, agent_status text NOT NULL, rubric_exit int NOT NULL, progressed boolean NOT NULL,
  model text NOT NULL, prompts text NOT NULL, cost_usd numeric(10,4) NOT NULL, budget_usd numeric(10,4) NOT NULL,
  duration_s int NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL,
  cache_read_tokens bigint NOT NULL, cache_write_tokens bigint NOT NULL, turns int NOT NULL, denials int NOT NULL,
  lessons int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX runs_ticket_idx ON runs (repo, ticket);
CREATE TABLE events (id bigserial PRIMARY KEY, repo text NOT NULL, ticket text NOT NULL, kind text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE lessons (id bigserial PRIMARY KEY, repo text NOT NULL, ticket text NOT NULL, signature text NOT NULL,
  resolution text, lesson text, resolved_by text, created_at timestamptz NOT NULL DEFAULT now(),
  resolved_at timestamptz, memory_synced_at timestamptz);
CREATE INDEX lessons_signature_trgm ON lessons USING gin (signature gin_trgm_ops);
CREATE TABLE decisions (id bigserial PRIMARY KEY, call_id bigint REFERENCES runs(id) ON DELETE CASCADE,
  run_id text, kind text NOT NULL, question text NOT NULL, answer text, confidence numeric(4,3),
  threshold numeric(4,3), mode text NOT NULL, latency_ms int, acted boolean NOT NULL DEFAULT false,
  lesson_id bigint, model text, error text, created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts,
  cost_usd, budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
  turns, denials, lessons)
  SELECT 'old', 'PROJ-' || g, 'b', g, 'continue', 'ok', 1, true, 'm', 'p', 0.5, 1, 10, 1, 1, 0, 0, 1, 0, 0
  FROM generate_series(1, 25) g;
INSERT INTO events (repo, ticket, kind) VALUES ('old', 'PROJ-1', 'detention'), ('old', 'PROJ-2', 'submitted');
INSERT INTO lessons (repo, ticket, signature, resolution, lesson, resolved_by, resolved_at)
  VALUES ('old', 'PROJ-1', 'sig one', 'res', 'les', 'me', now()), ('old', 'PROJ-3', 'sig two', NULL, NULL, NULL, NULL);
INSERT INTO decisions (call_id, run_id, kind, question, mode) VALUES (1, 'r1', 'stuck', 'q?', 'shadow');
`;

const columns = async (db: pg.Pool, table: string) =>
  (
    await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema()`,
      [table],
    )
  ).rows.map((r) => r.column_name);

const indexes = async (db: pg.Pool) =>
  (
    await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`)
  ).rows.map((r) => r.indexname);

const snapshot = async (db: pg.Pool) => ({
  runs: (await db.query('SELECT id, ticket, cost_usd, created_at FROM runs ORDER BY id')).rows,
  events: (await db.query('SELECT id, ticket, kind FROM events ORDER BY id')).rows,
  lessons: (await db.query('SELECT id, ticket, signature, resolution, resolved_at FROM lessons ORDER BY id')).rows,
  decisions: (await db.query('SELECT id, call_id, question FROM decisions ORDER BY id')).rows,
});

describe.each(BACKENDS)('schema upgrade on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await backend.fresh();
    pool = await rawPool(db.target);
    await pool.query(OLD_SCHEMA);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.dispose();
  });

  it('applied twice to an older database: adds every column, index and table, loses no row', async () => {
    const before = await snapshot(pool);
    expect(before.runs).toHaveLength(25);
    expect(await applySchema(pool)).toEqual({ applied: true });
    expect(await applySchema(pool, { force: true })).toEqual({ applied: true });
    expect(await applySchema(pool)).toEqual({ applied: false }); // recorded version is current

    expect(await snapshot(pool)).toEqual(before);
    const runs = await columns(pool, 'runs');
    for (const c of [
      'run_id',
      'tests_hash',
      'failing',
      'failing_tests',
      'first_error',
      'tree_id',
      'verdict',
      'fp_rules',
      'flaky_tests',
    ]) {
      expect(runs).toContain(c);
    }
    const lessons = await columns(pool, 'lessons');
    for (const c of ['run_id', 'fingerprint', 'first_error', 'scope', 'embedding']) expect(lessons).toContain(c);
    expect(await columns(pool, 'decisions')).toContain('url');
    const idx = await indexes(pool);
    for (const i of [
      'runs_ticket_idx',
      'runs_created_idx',
      'events_ticket_idx',
      'lessons_fingerprint_idx',
      'lessons_signature_trgm',
      'lessons_first_error_trgm',
      'decisions_run_idx',
      'decisions_call_idx',
      'runs_repo_created_idx',
      'runs_run_loop_idx',
      'events_created_idx',
      'lessons_created_idx',
      'decisions_created_idx',
      'lessons_run_idx',
    ]) {
      expect(idx).toContain(i);
    }
    const vector = (await pool.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).rowCount === 1;
    expect(idx.includes('lessons_embedding_hnsw')).toBe(vector);
    const type = await pool.query(
      `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'embedding'`,
    );
    expect(type.rows[0].t).toBe(vector ? 'vector(384)' : 'real[]');
    const v = await pool.query('SELECT version FROM chalk_schema');
    expect(v.rows).toEqual([{ version: SCHEMA_VERSION }]);
    // Old rows read the new columns as NULL.
    const old = await pool.query(`SELECT count(*)::int AS n FROM runs WHERE run_id IS NULL AND fp_rules IS NULL`);
    expect(old.rows[0].n).toBe(25);
  });

  it('the upgraded database works as a store: old and new rows side by side', async () => {
    const store = await PgStore.open(db.target, 60_000);
    try {
      const s = await store.tickets.summaries('old');
      expect(s).toHaveLength(25);
      expect(s.find((t) => t.ticket === 'PROJ-1')).toMatchObject({ loops: 1, fixes: 1 });
      const id = await store.lessons.open({
        repo: 'old',
        ticket: 'PROJ-9',
        signature: 'sig one again',
        fingerprint: 'f',
      });
      expect(id).toBe(3);
      const recalled = await store.lessons.lexical({
        repo: 'old',
        mode: 'text',
        query: 'sig one',
        firstError: null,
        limit: 3,
      });
      expect(recalled.map((l) => l.signature)).toEqual(['sig one']);
      // Spec mode reads lesson_bits (version 9): back-filled for the old lesson, and rewritten when its text changes.
      const spec = async (query: string) =>
        (await store.lessons.lexical({ repo: 'old', mode: 'spec', query, firstError: null, limit: 3 })).map(
          (l) => l.signature,
        );
      expect(await spec('# PROJ-4\nWhen sig one shows up, retry.')).toEqual(['sig one']);
      await store.pool.query(`UPDATE lessons SET first_error = 'quota exceeded' WHERE id = 1`);
      expect(await spec('# PROJ-4\nWhen sig one shows up, retry.')).toEqual([]);
      expect(await spec('# PROJ-4\nWhen the quota exceeded message shows up, retry.')).toEqual(['sig one']);
    } finally {
      await store.close();
    }
  });
});

/** share/schema.sql as each earlier version shipped it (tests/fixtures/schema/README.md). */
const EARLIER = Array.from({ length: SCHEMA_VERSION - 1 }, (_, i) => i + 1);
const earlierSchema = (v: number) => readFileSync(join(ROOT, 'tests', 'fixtures', 'schema', `v${v}.sql`), 'utf8');

/** An empty public schema (dropping the extensions with it), as a new database has. */
async function emptyDatabase(pool: pg.Pool): Promise<void> {
  await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
}

/** What applySchema did in version v: the file in one transaction, and the version recorded. */
async function applyEarlier(pool: pg.Pool, v: number): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query(earlierSchema(v));
    await c.query('INSERT INTO chalk_schema (id, version) VALUES (1, $1)', [v]);
    await c.query('COMMIT');
  } finally {
    c.release();
  }
}

describe.each(BACKENDS)('the upgrade from every earlier schema version on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let pool: pg.Pool;
  let fresh: Awaited<ReturnType<typeof schemaShape>>;
  beforeAll(async () => {
    db = await backend.fresh();
    pool = await rawPool(db.target);
    await emptyDatabase(pool);
    await applySchema(pool);
    fresh = await schemaShape(pool);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.dispose();
  });

  it.each(EARLIER)('version %i: every row kept, the schema the same as a new database, and recall works', async (v) => {
    await emptyDatabase(pool);
    await applyEarlier(pool, v);
    await seedHistory(pool, `v${v}`);
    // chalk_schema is the version itself, which the upgrade changes; version 7's lesson_trgms, made
    // from the lessons' texts, is replaced by version 9's lesson_bits.
    const { chalk_schema: _, lesson_trgms: __, ...columns } = await storedColumns(pool);
    const before = await tableRows(pool, columns);

    expect(await applySchema(pool)).toEqual({ applied: true });
    expect((await pool.query('SELECT version FROM chalk_schema')).rows).toEqual([{ version: SCHEMA_VERSION }]);
    expect(await tableRows(pool, columns)).toEqual(before);
    expect(await schemaShape(pool)).toEqual(fresh);

    const store = await PgStore.open(db.target, 60_000);
    try {
      // Recall reads lesson_bits (version 9), back-filled for the lessons written before it.
      const spec = await store.lessons.lexical({
        repo: `v${v}`,
        mode: 'spec',
        query: `# V-9\nWhen v${v} ${FAILURES[2]} shows up again, fix it.`,
        firstError: null,
        limit: 3,
      });
      expect(spec.map((l) => l.signature)).toEqual([`v${v} ${FAILURES[2]}`]);
      const failure = await store.lessons.lexical({
        repo: `v${v}`,
        mode: 'failure',
        query: `v${v} ${FAILURES[2]}`,
        firstError: null,
        limit: 1,
      });
      expect(failure.map((l) => l.signature)).toEqual([`v${v} ${FAILURES[2]}`]);
      const list = await store.lessons.list({ repo: null });
      expect(list).toHaveLength(4);
    } finally {
      await store.close();
    }
  });
});
