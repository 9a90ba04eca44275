import type { Pool } from 'pg';

/*
 * The planner's statistics for the tables the report card reads. A Postgres server keeps them with
 * autovacuum; the embedded store (PGlite, one session, no background workers) never does, and a
 * schema upgrade fills the rollup tables in one transaction that no one analyzes until autovacuum
 * next looks. Without them the card's plans are guesses: on a year of a busy team's rows the same
 * summary query took 12 s before autovacuum's first ANALYZE and 0.6 s after (issue 23's bench).
 * So the card analyzes, before it reads, what has never been analyzed or has grown past the point
 * at which autovacuum would analyze it (10% and 50 rows, its default scale factor and threshold).
 */

/** Every table the card's queries read (share/dashboard/*.sql). */
export const CARD_TABLES = [
  'runs',
  'events',
  'lessons',
  'decisions',
  'report_calls',
  'report_loops',
  'report_tickets',
  'report_test_names',
  'report_tests',
  'report_test_totals',
  'report_runs',
  'report_retries',
  'report_retry_keys',
  'report_run_days',
  'report_run_seen',
  'report_pending',
] as const;

/** A table's row count as its last ANALYZE (or VACUUM) left it: -1 when it never had one, null when there is no such table. */
export interface TableEstimate {
  table: string;
  reltuples: number | null;
}

/**
 * The tables to analyze: all of them when `runs` holds more rows than its estimate by autovacuum's
 * margin (every rollup grows with runs), otherwise those never analyzed. A table that is not there
 * (an older schema) is left out.
 */
export function staleTables(estimates: readonly TableEstimate[], runsNow: number): string[] {
  const present = estimates.filter((e) => e.reltuples !== null);
  const runs = present.find((e) => e.table === 'runs');
  const runsGrew = runs !== undefined && runsNow > 1.1 * Math.max(runs.reltuples ?? 0, 0) + 50;
  return present.filter((e) => runsGrew || (e.reltuples ?? 0) < 0).map((e) => e.table);
}

/**
 * Analyzes the card's stale tables (staleTables), in one statement; returns the tables analyzed.
 * Best effort: where statistics cannot be written (a standby, a role that owns no table) the card
 * is read as it is, only slower, so any failure is returned as `[]`, never thrown.
 */
export async function freshenCardStats(pool: Pool): Promise<string[]> {
  try {
    const r = await pool.query<{ t: string; reltuples: number | null; runs_now: string }>(
      `SELECT t, (SELECT reltuples FROM pg_class WHERE oid = to_regclass(t)) AS reltuples,
         (SELECT coalesce(max(id) - min(id) + 1, 0) FROM runs)::text AS runs_now
       FROM unnest($1::text[]) t`,
      [CARD_TABLES],
    );
    const stale = staleTables(
      r.rows.map((x) => ({ table: x.t, reltuples: x.reltuples === null ? null : Number(x.reltuples) })),
      Number(r.rows[0]?.runs_now ?? 0),
    );
    // The names are CARD_TABLES' own, never input.
    if (stale.length > 0) await pool.query(`ANALYZE ${stale.join(', ')}`);
    return stale;
  } catch {
    return [];
  }
}
