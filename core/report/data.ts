import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { SHARE_DIR } from '../paths.js';

/**
 * The report card's data: the queries in share/dashboard/, each returning one JSON document,
 * merged into one. The same SQL runs on the embedded store and on a Postgres server.
 */
export const QUERIES = ['summary', 'runs', 'decider', 'tickets'] as const;
/** The stuck answers the calibration gate judges: their own query, which a run in `on` reads too (core/store/decisions.ts). */
export const STUCK_ANSWERS_QUERY = 'stuck-answers';

export interface Window {
  days: number;
  /** One repository, or null for all of them. */
  repo: string | null;
}

const n = Number;

export interface RawSummary {
  totals: Record<string, number>;
  events: { detentions: number; submitted: number; spec_blocked: number; ready: number };
  by_kind: { kind: string; calls: number; cost: number; seconds: number }[];
  by_day: { day: string; calls: number; cost: number; loop_cost: number; no_progress_cost: number }[];
  budget: {
    cap: number | null;
    median: number | null;
    p90: number | null;
    max: number | null;
    near_cap: number;
    buckets: { bucket: number; loops: number }[];
  };
  by_prompts: {
    prompts: string;
    first_at: string;
    loops: number;
    retries: number;
    checkpoints: number;
    cost: number;
  }[];
  by_model: { model: string; loops: number; retries: number; checkpoints: number; cost: number }[];
  checks: {
    review: { ran: number; failed: number; cost: number; fix_loops: number; fix_cost: number };
    spec_check: { ran: number; failed: number; cost: number; blocked_specs: number };
  };
  agent: { status: string; loops: number; turns: number }[];
  verdicts: Record<string, number>;
  fp_rules: Record<string, number>;
  detentions_by_reason: Record<string, number>;
  lessons: Record<string, number>;
  failing_tests: { repo: string; test: string; loops: number; tickets: number }[];
  /** Tests that failed and passed when the rubric ran again on the same tree. */
  flaky_tests: { repo: string; test: string; loops: number; tickets: number }[];
}

export interface HelpCounts {
  with: number;
  with_passed: number;
  without: number;
  without_passed: number;
}

export interface RawRuns {
  ledger_runs: { mode: string; detained: boolean; loops: [number, boolean, string | null][] }[];
  verdictless_runs: number;
  lessons_help: { all: HelpCounts; same_failure: HelpCounts & { failures: number } };
}

export interface RawDecider {
  asked: number;
  answered: number;
  acted: number;
  median_latency_ms: number | null;
  by_kind: Record<string, number>;
  by_mode: Record<string, number>;
  no_answer: { error: string; calls: number }[];
  models: { url: string; model: string; asked: number }[];
  answers: {
    url: string;
    model: string;
    run: string;
    mode: string;
    answer: 'yes' | 'no';
    confidence: number;
    in_window: boolean;
    later_progress: boolean;
    detained: boolean;
  }[];
}

export interface RawTickets {
  tickets: {
    repo: string;
    ticket: string;
    at: string;
    loops: number;
    cost: number;
    event_kind: string | null;
    event_at: string | null;
    call_kind: string | null;
    call_status: string | null;
    call_at: string | null;
  }[];
}

export interface RawReport {
  summary: RawSummary;
  runs: RawRuns;
  decider: RawDecider;
  tickets: RawTickets;
}

export function querySql(name: (typeof QUERIES)[number] | typeof STUCK_ANSWERS_QUERY): string {
  return readFileSync(join(SHARE_DIR, 'dashboard', `${name}.sql`), 'utf8');
}

/** Runs every query for the window; numbers stored as numeric arrive as JSON numbers. */
export async function loadReport(pool: Pool, w: Window): Promise<RawReport> {
  const out: Record<string, unknown> = {};
  for (const q of QUERIES) {
    const r = await pool.query<{ doc: unknown }>(querySql(q), [w.days, w.repo]);
    out[q] = r.rows[0]?.doc;
  }
  const raw = out as unknown as RawReport;
  const stuck = await pool.query<{ doc: RawDecider['answers'] }>(querySql(STUCK_ANSWERS_QUERY), [w.days, w.repo]);
  raw.decider.answers = stuck.rows[0]?.doc ?? [];
  // Nullable aggregates and numerics are numbers or null from here on.
  raw.summary.budget.cap = raw.summary.budget.cap === null ? null : n(raw.summary.budget.cap);
  return raw;
}
