import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { SHARE_DIR } from '../paths.js';

/**
 * The schema version share/schema.sql brings a database to. Raise it whenever schema.sql
 * changes: a database recording an older version gets the file applied again.
 * 1: runs, events, lessons (with embedding), decisions (with url).
 * 2: indexes for the report card's window (runs by repo and time, events, lessons and
 *    decisions by time) and for a run's later loops (runs by run_id and loop).
 * 3: lessons by run_id (whether a run was detained: asked of every ledger run and decider answer).
 * 4: runs.flaky_tests (failing tests that passed when the rubric ran again on the same tree).
 * 5: lessons.forgotten_at, lesson_recalls (which lessons each loop was given), and for spec-mode
 *    recall lessons.recall_trgms with one partial trigram index per band of it (chalk_spec_bands).
 * 6: fast similarity recall: lessons.signature_trgms and first_error_trgms, a partial GiST trigram
 *    index on each text (nearest-neighbour order) for the texts up to chalk_knn_trgms() trigrams,
 *    and a btree on the count for the longer ones.
 * 7: spec-mode recall's candidates: lesson_trgms (each lesson's distinct trigrams of its first
 *    error or signature, with their count), kept by triggers on lessons and back-filled; version
 *    5's recall_trgms, its band indexes and chalk_spec_bands() dropped.
 * 8: where rows were born, for `chalk db copy`: chalk_schema.origin (this database's own id) and
 *    origin, origin_id on every copied table, unique together.
 * 9: recall by bitmaps: lesson_bits (per chunk of lesson ids, the lessons holding each trigram of
 *    the signature and of coalesce(first_error, signature), their trigram counts' bits, and the
 *    flags the rules filter on), kept by triggers on lessons and back-filled; version 6's GiST and
 *    GIN indexes on the two texts and version 7's lesson_trgms, which it replaces, dropped.
 * 10: spec-mode recall's anchors: lesson_spec_anchors (per trigram and chunk of lesson ids, the
 *    lessons it anchors: each lesson's rarest 0.6 of its trigrams, 0.5 beyond 150), kept by triggers
 *    on lessons and back-filled, so spec mode counts the spec's anchors per lesson and reads only
 *    the texts of the lessons that can pass.
 * 11: the report card's rollup: report_calls, report_loops, report_tickets, report_tests (per UTC day),
 *    report_runs and report_retries (per run), kept by triggers on runs and back-filled, and
 *    runs_loop_cost_idx for the exact loop-cost percentiles.
 * 12: the rollup kept cheaply: an insert lists its rows in report_pending and every 64th insert folds
 *    them in at once (the card reads pending rows as it reads the window's first partial day);
 *    report_test_totals and report_retry_keys for long windows; decisions.call_loop and call_repo.
 * Every earlier version's file is in tests/fixtures/schema/, and the upgrade from each is tested.
 */
export const SCHEMA_VERSION = 12;

/** Any fixed number: the advisory lock that serialises schema application across processes. */
const SCHEMA_LOCK = 7_242_001;

/** Records the version schema.sql brought the database to ($1), never lowering it. */
export const RECORD_VERSION = `INSERT INTO chalk_schema (id, version) VALUES (1, $1)
  ON CONFLICT (id) DO UPDATE SET version = GREATEST(chalk_schema.version, EXCLUDED.version), applied_at = now()`;

export function schemaSql(): string {
  return readFileSync(join(SHARE_DIR, 'schema.sql'), 'utf8');
}

async function recordedVersion(c: PoolClient): Promise<number | null> {
  const r = await c.query<{ version: number }>(`SELECT version FROM chalk_schema WHERE id = 1`);
  return r.rows[0]?.version ?? null;
}

/** The recorded version in one round trip, null when there is no chalk_schema (a new database). */
async function versionIfAny(c: PoolClient): Promise<number | null> {
  try {
    return await recordedVersion(c);
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return null; // undefined_table
    throw err;
  }
}

/**
 * Brings the database to SCHEMA_VERSION: applies share/schema.sql in one transaction under
 * an advisory lock unless the recorded version is already current. `force` applies it anyway.
 */
export async function applySchema(pool: Pool, opts: { force?: boolean } = {}): Promise<{ applied: boolean }> {
  const c = await pool.connect();
  try {
    if (!opts.force && (await versionIfAny(c)) === SCHEMA_VERSION) return { applied: false };
    await c.query('BEGIN');
    try {
      await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      const exists = await c.query(`SELECT to_regclass('chalk_schema') IS NOT NULL AS ok`);
      if (!opts.force && exists.rows[0]?.ok && (await recordedVersion(c)) === SCHEMA_VERSION) {
        await c.query('COMMIT');
        return { applied: false };
      }
      await c.query(schemaSql());
      await c.query(RECORD_VERSION, [SCHEMA_VERSION]);
      await c.query('COMMIT');
      return { applied: true };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  } finally {
    c.release();
  }
}
