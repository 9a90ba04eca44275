import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool, PoolClient } from 'pg';
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
  /** The window's loops by cost bucket (chalk_report_bucket): [bucket, loops], ascending. */
  cost_hist: [number, number][];
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

/** Runs of the window with a verdict and the same facts (ledger.ts's RunFacts), with their summed costs. */
export interface RawLedgerGroup {
  mode: string;
  detained: boolean;
  judged: boolean;
  blocker_only: boolean;
  stop_verdict: string | null;
  false_stop: boolean;
  improving: boolean;
  runs: number;
  np_cost: number;
  saved: number;
}

export interface RawRuns {
  ledger: RawLedgerGroup[];
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
    /** Answers alike, grouped (the window's other than shadow yeses); 1 when absent. */
    count?: number;
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

/** The card's stuck answers (answers.sql): the gate's of all history, the window's others grouped. */
export const ANSWERS_QUERY = 'answers';

interface AnswersDoc {
  keys: [string, string][];
  gated: [string, string, string, number, boolean, boolean, boolean][];
  others: [string, string, string, 'yes' | 'no', number, boolean, boolean, number][];
}

/**
 * The stuck answers the card judges, from answers.sql's document: every shadow yes, the window's
 * other answers as they were grouped (with their count), and a placeholder outside the window for a
 * (URL, model) with neither, so the gate lists it. The gate and the bands count exactly what they
 * would over every answer: the gate reads only shadow yeses, the bands only the window's.
 */
export function answersOf(doc: AnswersDoc): RawDecider['answers'] {
  const out: RawDecider['answers'] = [];
  const seen = new Set<string>();
  for (const [url, model, run, confidence, inWindow, laterProgress, detained] of doc.gated) {
    seen.add(JSON.stringify([url, model]));
    out.push({
      url,
      model,
      run,
      mode: 'shadow',
      answer: 'yes',
      confidence,
      in_window: inWindow,
      later_progress: laterProgress,
      detained,
    });
  }
  for (const [url, model, mode, answer, confidence, laterProgress, detained, n] of doc.others) {
    seen.add(JSON.stringify([url, model]));
    out.push({
      url,
      model,
      run: '',
      mode,
      answer,
      confidence,
      in_window: true,
      later_progress: laterProgress,
      detained,
      count: Number(n),
    });
  }
  for (const [url, model] of doc.keys)
    if (!seen.has(JSON.stringify([url, model])))
      out.push({
        url,
        model,
        run: '',
        mode: '',
        answer: 'no',
        confidence: 0,
        in_window: false,
        later_progress: false,
        detained: false,
      });
  return out;
}

export function querySql(name: (typeof QUERIES)[number] | typeof STUCK_ANSWERS_QUERY | typeof ANSWERS_QUERY): string {
  return readFileSync(join(SHARE_DIR, 'dashboard', `${name}.sql`), 'utf8');
}

/** percentile_cont(p)'s rows (0-based, in ascending order) among n, and the share of the way between them. */
export function percentileRows(n: number, p: number): { lo: number; hi: number; frac: number } {
  const pos = p * (n - 1);
  return { lo: Math.floor(pos), hi: Math.ceil(pos), frac: pos - Math.floor(pos) };
}

/** The histogram's bucket holding the row of rank `rank` (0-based), the row's place in it, and its rows. */
export function bucketOf(
  hist: readonly [number, number][],
  rank: number,
): { bucket: number; offset: number; size: number } {
  let before = 0;
  for (const [bucket, n] of hist) {
    if (rank < before + n) return { bucket, offset: rank - before, size: n };
    before += n;
  }
  throw new Error(`rank ${rank} is past the histogram's ${before} rows`);
}

/** The window's loop costs of these ranks in a bucket (read from runs_loop_cost_idx), from its cheapest or its dearest. */
const rankedCosts = (order: 'ASC' | 'DESC') => `SELECT cost_usd::text AS cost FROM runs
  WHERE chalk_report_bucket(cost_usd) = $1 AND kind IN ('continue', 'retry', 'fix-review')
    AND created_at >= now() - make_interval(days => $2::int) AND ($3::text IS NULL OR repo = $3::text)
  ORDER BY cost_usd ${order} OFFSET $4 LIMIT $5`;
const RANKED_COSTS = rankedCosts('ASC');
const RANKED_COSTS_DESC = rankedCosts('DESC');

/**
 * Up to `count` of the window's loop costs from rank `rank` on, within its bucket, ascending: read
 * from whichever end of the bucket is nearer (a bucket holds thousands of a year's loops).
 */
async function costsAt(
  db: Pick<PoolClient, 'query'>,
  w: Window,
  hist: readonly [number, number][],
  rank: number,
  count: number,
): Promise<number[]> {
  const { bucket, offset, size } = bucketOf(hist, rank);
  const c = Math.min(count, size - offset);
  const r =
    offset > size / 2
      ? (
          await db.query<{ cost: string }>(RANKED_COSTS_DESC, [bucket, w.days, w.repo, size - offset - c, c])
        ).rows.reverse()
      : (await db.query<{ cost: string }>(RANKED_COSTS, [bucket, w.days, w.repo, offset, c])).rows;
  return r.map((x) => Number(x.cost));
}

/**
 * percentile_cont(p) of the window's loop costs, exactly as Postgres computes it over the rows: the
 * histogram finds the bucket of each of its two rows, and the rows of that bucket in the window are read.
 */
async function loopCostPercentile(
  db: Pick<PoolClient, 'query'>,
  w: Window,
  hist: readonly [number, number][],
  p: number,
): Promise<number | null> {
  const n = hist.reduce((s, [, k]) => s + k, 0);
  if (n === 0) return null;
  const { lo, hi, frac } = percentileRows(n, p);
  const at = (rank: number, count: number) => costsAt(db, w, hist, rank, count);
  const first = await at(lo, hi === lo ? 1 : 2);
  const low = first[0];
  if (low === undefined) throw new Error('the rollup and runs disagree on the loop costs');
  if (hi === lo) return low;
  const high = first[1] ?? (await at(hi, 1))[0];
  if (high === undefined) throw new Error('the rollup and runs disagree on the loop costs');
  return low + frac * (high - low);
}

/** Opens a read-only REPEATABLE READ transaction (on `snapshot`, another's exported one, when given). */
async function begin(db: PoolClient, snapshot?: string): Promise<void> {
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  if (snapshot !== undefined) await db.query(`SET TRANSACTION SNAPSHOT '${snapshot.replace(/[^0-9A-F-]/gi, '')}'`);
  // The window's groupings hash tens of thousands of rollup rows: in memory, not spilled to disk. Compiling
  // these plans (JIT, where the server has it) costs more than running them: seconds for the stuck answers.
  await db.query(`SET LOCAL work_mem = '64MB'; SET LOCAL jit = off`);
}

/**
 * Runs every query for the window in one read-only snapshot (the rollup and the rows it is read
 * beside agree); numbers stored as numeric arrive as JSON numbers. With `parallel` (a Postgres
 * server, whose pool has four connections) the queries run at once on connections that share the
 * first one's exported snapshot; the embedded server has one session, so there they run in turn.
 */
export async function loadReport(pool: Pool, w: Window, opts: { parallel?: boolean } = {}): Promise<RawReport> {
  const first = await pool.connect();
  const more: PoolClient[] = [];
  try {
    await begin(first);
    const run = async (db: PoolClient, name: (typeof QUERIES)[number] | typeof ANSWERS_QUERY) =>
      (await db.query<{ doc: unknown }>(querySql(name), [w.days, w.repo])).rows[0]?.doc;
    let docs: unknown[];
    // Four connections at once: a smaller pool would wait for itself.
    if (opts.parallel && ((pool as Pool & { options?: { max?: number } }).options?.max ?? 0) >= 4) {
      const snap = (await first.query<{ s: string }>('SELECT pg_export_snapshot() AS s')).rows[0]?.s as string;
      for (let i = 0; i < 3; i++) {
        const c = await pool.connect();
        more.push(c);
        await begin(c, snap);
      }
      const [c1, c2, c3] = more as [PoolClient, PoolClient, PoolClient];
      docs = await Promise.all([
        run(first, 'summary'),
        run(c1, 'runs'),
        run(c2, 'answers'),
        (async () => [await run(c3, 'decider'), await run(c3, 'tickets')])(),
      ]);
      docs = [docs[0], docs[1], ...(docs[3] as unknown[]), docs[2]];
    } else {
      docs = [];
      for (const q of [...QUERIES, ANSWERS_QUERY] as const) docs.push(await run(first, q));
    }
    const [summary, runs, decider, tickets, answers] = docs;
    const raw = { summary, runs, decider, tickets } as unknown as RawReport;
    raw.decider.answers = answersOf((answers as AnswersDoc | undefined) ?? { keys: [], gated: [], others: [] });
    const hist = raw.summary.cost_hist;
    // The median, the 90th percentile and the dearest loop (the last rank), at once where there are connections.
    const levels = [0.5, 0.9, 1] as const;
    const [median, p90, max] =
      more.length >= 2
        ? await Promise.all(levels.map((p, i) => loopCostPercentile([first, ...more][i] as PoolClient, w, hist, p)))
        : [
            await loopCostPercentile(first, w, hist, 0.5),
            await loopCostPercentile(first, w, hist, 0.9),
            await loopCostPercentile(first, w, hist, 1),
          ];
    raw.summary.budget.median = median ?? null;
    raw.summary.budget.p90 = p90 ?? null;
    raw.summary.budget.max = max ?? null;
    for (const c of [first, ...more]) await c.query('COMMIT');
    // Nullable aggregates and numerics are numbers or null from here on.
    raw.summary.budget.cap = raw.summary.budget.cap === null ? null : n(raw.summary.budget.cap);
    return raw;
  } catch (err) {
    for (const c of [first, ...more]) await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    for (const c of [first, ...more]) c.release();
  }
}
