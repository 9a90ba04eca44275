import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCard, type Card } from '../../core/report/card.js';
import { loadReport, type RawReport } from '../../core/report/data.js';
import { type LedgerRun, runFacts } from '../../core/report/ledger.js';
import { copyRows } from '../../core/store/copy/copy.js';
import { applySchema, PgStore } from '../../core/store/index.js';
import { BACKENDS, ROOT, rawPool } from './store/backends.js';

/**
 * The report card from the rollup (share/dashboard/, schema versions 11 and 12) equals the card from
 * the rows alone (tests/fixtures/dashboard-raw/, the queries before the rollup) on seeded telemetry,
 * on both databases: for windows whose start falls at any time of day, for every repository and
 * one, with a run spanning midnight, a late row placed before its run's loops, rows changed and
 * deleted, rows pending (not yet folded in) and folded, a database copied by `chalk db copy` and ones
 * upgraded from schema versions 9 and 11.
 */
const RAW = join(ROOT, 'tests', 'fixtures', 'dashboard-raw');
const rawSql = (q: string) => readFileSync(join(RAW, `${q}.sql`), 'utf8');
const seedSql = (rows: number) =>
  readFileSync(join(ROOT, 'tests', 'fixtures', 'telemetry-seed.sql'), 'utf8').replaceAll('{{RUNS}}', String(rows));

type RawRef = Omit<RawReport, 'runs'> & {
  runs: Omit<RawReport['runs'], 'ledger'> & { ledger_runs: LedgerRun[] };
};

/** The document as the raw queries give it, in one snapshot. */
async function rawReport(pool: pg.Pool, days: number, repo: string | null): Promise<RawRef> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const out: Record<string, unknown> = {};
    for (const q of ['summary', 'runs', 'decider', 'tickets'])
      out[q] = (await c.query<{ doc: unknown }>(rawSql(q), [days, repo])).rows[0]?.doc;
    const raw = out as unknown as RawRef;
    raw.decider.answers = (await c.query(rawSql('stuck-answers'), [days, repo])).rows[0]?.doc ?? [];
    await c.query('COMMIT');
    raw.summary.budget.cap = raw.summary.budget.cap === null ? null : Number(raw.summary.budget.cap);
    return raw;
  } finally {
    c.release();
  }
}

const settings = (days: number, repo: string | null) => ({
  days,
  repo,
  deciderThreshold: 0.8,
  fpRules: 'shadow',
  testReportSet: false,
});

/**
 * What the page shows, without the inputs whose shape differs on purpose (the ledger's runs, grouped;
 * the cost histogram; the stuck answers, of which the card reads the gate's and the window's).
 */
function shown(c: Card): unknown {
  const { cost_hist: _h, ...summary } = c.raw.summary;
  const { ledger: _l, ...runs } = c.raw.runs;
  const { answers: _a, ...decider } = c.raw.decider;
  return { ...c, raw: { ...c.raw, summary, runs, decider } };
}

const key = (f: ReturnType<typeof runFacts>) =>
  JSON.stringify([f.mode, f.detained, f.judged, f.blockerOnly, f.stopVerdict, f.falseStop, f.improving]);

async function expectSame(pool: pg.Pool, days: number, repo: string | null, parallel: boolean): Promise<void> {
  const ref = await rawReport(pool, days, repo);
  const got = await loadReport(pool, { days, repo }, { parallel });
  const { ledger_runs, ...refRuns } = ref.runs;
  const refCard = buildCard(
    {
      ...ref,
      runs: {
        ...refRuns,
        // The rows' ledger, run by run (verdictLedger's input), as groups of one.
        ledger: ledger_runs.map((r) => {
          const f = runFacts(r);
          return {
            mode: f.mode,
            detained: f.detained,
            judged: f.judged,
            blocker_only: f.blockerOnly,
            stop_verdict: f.stopVerdict,
            false_stop: f.falseStop,
            improving: f.improving,
            runs: 1,
            np_cost: f.noProgressCost,
            saved: f.saved,
          };
        }),
      },
    } as RawReport,
    settings(days, repo),
  );
  const card = buildCard(got, settings(days, repo));
  const where = `--days ${days}${repo ? ` --repo ${repo}` : ''}`;
  expect(shown(card), where).toEqual(shown(refCard));
  // Each run's facts: the SQL's groups are the TypeScript rules' over the runs.
  const groups = new Map<string, { runs: number; np: number; saved: number }>();
  for (const r of ledger_runs) {
    const f = runFacts(r);
    const g = groups.get(key(f)) ?? { runs: 0, np: 0, saved: 0 };
    groups.set(key(f), { runs: g.runs + 1, np: g.np + f.noProgressCost, saved: g.saved + f.saved });
  }
  const sql = new Map(
    got.runs.ledger.map((g) => [
      JSON.stringify([g.mode, g.detained, g.judged, g.blocker_only, g.stop_verdict, g.false_stop, g.improving]),
      { runs: Number(g.runs), np: Number(g.np_cost), saved: Number(g.saved) },
    ]),
  );
  const round = (m: Map<string, { runs: number; np: number; saved: number }>) =>
    [...m.entries()]
      .map(([k, v]) => [k, v.runs, Math.round(v.np * 1e4), Math.round(v.saved * 1e4)])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  expect(round(sql), where).toEqual(round(groups));
}

/** The windows every check reads: starts at several times of day, and the whole history. */
const WINDOWS = [1, 2, 7, 30, 366];

/** Every window, for every repository and one; on a server with the queries at once too. */
async function expectAllSame(pool: pg.Pool, server: boolean): Promise<void> {
  for (const days of WINDOWS) {
    await expectSame(pool, days, null, false);
    await expectSame(pool, days, 'repo-3', false);
    if (server) await expectSame(pool, days, null, true);
  }
}

/** A run spanning the last UTC midnight, and a late loop written after its run's later loops. */
async function awkwardRows(pool: pg.Pool): Promise<void> {
  await pool.query(`
    INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts, cost_usd,
      budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, turns, denials, lessons,
      run_id, tests_hash, failing_tests, verdict, fp_rules, created_at)
    SELECT 'repo-3', 'MID-1', 'b', g, CASE WHEN g = 2 THEN 'retry' ELSE 'continue' END, 'ok', CASE WHEN g = 4 THEN 0 ELSE 1 END,
      g = 4, 'opus', 'a1b2c3d4', 0.1 * g, 1, 60, 10, 10, 0, 0, 3, 0, g % 2, 'MID-1-0', 'h' || (g % 2),
      CASE WHEN g < 4 THEN 'tests/mid.test.ts::x' END, CASE WHEN g = 1 THEN 'first' WHEN g = 3 THEN 'repeat' END, 'shadow',
      date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + (g - 3) * interval '10 minutes'
    FROM generate_series(1, 5) g`);
  // Late: loop 0 of an old run, written now but dated inside the run, before its other loops.
  await pool.query(`
    INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts, cost_usd,
      budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, turns, denials, lessons,
      run_id, verdict, fp_rules, created_at)
    SELECT repo, ticket, branch, 0, 'retry', 'ok', 1, false, model, prompts, 0.77, 1, 60, 10, 10, 0, 0, 3, 0, 1,
      run_id, 'deja_vu', fp_rules, created_at - interval '1 minute'
    FROM runs WHERE run_id IS NOT NULL AND kind = 'continue' AND created_at < now() - interval '20 days'
    ORDER BY id DESC LIMIT 3`);
}

/**
 * Rows recorded one statement at a time and not yet folded into the rollup (schema version 12): a
 * transaction that reads one snapshot never folds, so every row here stays in report_pending. Loops
 * appended to runs of the last days (one across the 30-day window's start), a late loop of an old run, a
 * new run and ticket (numbered `tag`) today with a failing test no row named before, a progressing loop after a stuck
 * answer, and that answer.
 */
async function pendingRows(pool: pg.Pool, tag: number): Promise<void> {
  const pending = async () =>
    Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM report_pending')).rows[0]?.n);
  const before = await pending();
  let added = 0;
  const c = await pool.connect();
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const copyOf = (where: string, loop: string, extra: string) => `
      INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts, cost_usd,
        budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, turns, denials, lessons,
        run_id, tests_hash, failing_tests, verdict, fp_rules, created_at)
      SELECT repo, ticket, branch, ${loop}, 'retry', 'ok', 1, ${extra}, model, prompts, 0.4321, 2, 60, 10, 10, 0, 0, 3, 0, 1,
        run_id, 'h-pending', 'tests/pending.test.ts::new-${tag}', 'repeat', fp_rules, created_at + interval '2 minutes'
      FROM runs WHERE ${where} ORDER BY id DESC LIMIT 1`;
    // Appended to the three latest runs, and to a run across the 30-day window's start.
    // Each statement writes its one row (or the scenario it stands for is missing from the seed).
    const one = async (sql: string) => {
      expect((await c.query(sql)).rowCount, sql).toBe(1);
      added++;
    };
    for (const k of [0, 1, 2])
      await one(
        copyOf(
          `run_id = (SELECT run_id FROM runs WHERE run_id IS NOT NULL ORDER BY created_at DESC, id DESC OFFSET ${k * 20} LIMIT 1)`,
          'loop + 1',
          'false',
        ),
      );
    await one(
      copyOf(
        `run_id = (SELECT run_id FROM runs WHERE run_id IS NOT NULL AND created_at < now() - interval '30 days'
           ORDER BY created_at DESC LIMIT 1)`,
        'loop + 1',
        'false',
      ),
    );
    // A late loop of an old run (dated inside it), and a run of its own today with a new test and ticket.
    await one(
      copyOf(
        `run_id IS NOT NULL AND kind = 'continue' AND created_at < now() - interval '100 days'`,
        '0',
        'false',
      ).replace("created_at + interval '2 minutes'", "created_at - interval '1 minute'"),
    );
    for (let g = 1; g <= 3; g++)
      await one(`
        INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts, cost_usd,
          budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, turns, denials,
          lessons, run_id, tests_hash, failing_tests, flaky_tests, verdict, fp_rules, created_at)
        VALUES ('repo-3', 'PEND-${tag}', 'b', ${g}, '${g === 2 ? 'retry' : 'continue'}', 'ok', ${g === 3 ? 0 : 1}, ${g === 3},
          'opus', 'a1b2c3d4', ${0.11 * g}, 1, 60, 10, 10, 0, 0, 3, 0, ${g % 2}, 'PEND-${tag}-0', 'hp${g % 2}',
          ${g < 3 ? `'tests/pending.test.ts::new-${tag}'` : 'NULL'}, ${g === 1 ? "'tests/flaky-pending.test.ts::x'" : 'NULL'},
          ${g === 1 ? "'first'" : g === 2 ? "'deja_vu'" : 'NULL'}, 'shadow', now() - interval '1 hour' + ${g} * interval '1 minute')`);
    // A stuck yes on loop 1 of that run: the progress after it is loop 3, a pending row.
    const stuck = await c.query(`
      INSERT INTO decisions (call_id, run_id, kind, question, answer, confidence, threshold, mode, latency_ms, model, url,
        created_at)
      SELECT id, run_id, 'stuck', 'Is this loop stuck?', 'yes', 0.93, 0.8, 'shadow', 300, 'qwen2.5:3b@8f2c1a9b0d3e',
        'http://decider-0.internal:11434/', created_at + interval '5 seconds'
      FROM runs WHERE run_id = 'PEND-${tag}-0' AND loop = 1`);
    expect(stuck.rowCount).toBe(1);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    c.release();
  }
  // None of them folded: every row written is pending, with those pending before.
  expect(added).toBe(8);
  expect(await pending()).toBe(before + added);
}

describe.each(BACKENDS)('the report card from the rollup equals the card from the rows on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;

  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
    await store.pool.query(seedSql(4000));
    await awkwardRows(store.pool);
  }, 600_000);
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  it('seeded, with a run across midnight and late loops', async () => {
    await expectAllSame(store.pool, backend.name === 'postgres');
  }, 600_000);

  it('after rows are changed and deleted', async () => {
    await store.pool.query(`UPDATE runs SET cost_usd = cost_usd + 0.5, progressed = NOT progressed
      WHERE id IN (SELECT id FROM runs ORDER BY id DESC LIMIT 40)`);
    await store.pool.query(`DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE id % 97 = 0)
      AND id NOT IN (SELECT call_id FROM decisions WHERE call_id IS NOT NULL)
      AND id NOT IN (SELECT call_id FROM lesson_recalls)`);
    await expectAllSame(store.pool, backend.name === 'postgres');
  }, 600_000);

  it('with rows not yet folded in, and after they are', async () => {
    const count = async (sql: string) => Number((await store.pool.query<{ n: string }>(sql)).rows[0]?.n);
    const pending = () => count('SELECT count(*) AS n FROM report_pending');
    // The rollup's calls are the rows less the pending ones: a card that did not read them would differ.
    const rolledUp = () => count('SELECT COALESCE(sum(n), 0) AS n FROM report_calls WHERE every');
    const rows = () => count('SELECT count(*) AS n FROM runs');
    await pendingRows(store.pool, 1);
    expect(await pending()).toBeGreaterThan(0);
    expect(await rolledUp()).toBe((await rows()) - (await pending()));
    await expectAllSame(store.pool, backend.name === 'postgres');
    // A change folds what is pending first, then makes its days and runs again.
    await pendingRows(store.pool, 2);
    await store.pool.query(`UPDATE runs SET progressed = NOT progressed, cost_usd = cost_usd + 0.25
      WHERE id IN (SELECT id FROM report_pending ORDER BY id LIMIT 3)`);
    expect(await pending()).toBe(0);
    expect(await rolledUp()).toBe(await rows());
    await expectAllSame(store.pool, backend.name === 'postgres');
    // The fold itself.
    await pendingRows(store.pool, 3);
    expect(await pending()).toBeGreaterThan(0);
    await store.pool.query('SELECT chalk_report_fold()');
    expect(await pending()).toBe(0);
    expect(await rolledUp()).toBe(await rows());
    await expectAllSame(store.pool, backend.name === 'postgres');
  }, 600_000);

  it("the days made again leave rows still pending to their fold (an insert's commit between a change's fold and its days)", async () => {
    // A change folds under the rollup's lock, then makes its days again from the rows, each statement in
    // a snapshot of its own: an insert that commits between the two has its rows in runs and still in
    // report_pending. Here that state is made in one snapshot (no fold), and the days made again directly.
    const count = async (sql: string) => Number((await store.pool.query<{ n: string }>(sql)).rows[0]?.n);
    const c = await store.pool.connect();
    try {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await c.query(`
        INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts, cost_usd,
          budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, turns, denials, lessons,
          run_id, tests_hash, failing_tests, verdict, fp_rules, created_at)
        SELECT 'repo-3', 'RACE-1', 'b', g, 'continue', 'ok', 1, false, 'opus', 'a1b2c3d4', 0.05 * g, 1, 60, 10, 10, 0, 0, 3,
          0, 0, 'RACE-1-0', 'hr', 'tests/race.test.ts::x', 'spinning', 'shadow', now() - (4 - g) * interval '1 minute'
        FROM generate_series(1, 3) g`);
      await c.query(`SELECT chalk_report_days_redo(ARRAY[(now() AT TIME ZONE 'UTC')::date])`);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK');
      throw err;
    } finally {
      c.release();
    }
    expect(await count('SELECT count(*) AS n FROM report_pending')).toBeGreaterThanOrEqual(3);
    expect(await count('SELECT COALESCE(sum(n), 0) AS n FROM report_calls WHERE every')).toBe(
      (await count('SELECT count(*) AS n FROM runs')) - (await count('SELECT count(*) AS n FROM report_pending')),
    );
    await expectAllSame(store.pool, backend.name === 'postgres');
    await store.pool.query('SELECT chalk_report_fold()');
    await expectAllSame(store.pool, backend.name === 'postgres');
  }, 600_000);

  it('one call at a time through the store: rows are folded in every 64th insert', async () => {
    const tick = (await store.pool.query('SELECT last_value, is_called FROM report_pending_tick')).rows[0];
    const before = Number(tick?.last_value) - (tick?.is_called ? 0 : 1);
    for (let i = 0; i < 70; i++)
      await store.calls.record({
        repo: 'repo-3',
        ticket: 'ONE-1',
        branch: 'b',
        loop: i + 1,
        kind: i % 3 === 0 ? 'retry' : 'continue',
        agentStatus: 'ok',
        rubricExit: i % 5 === 4 ? 0 : 1,
        progressed: i % 5 === 4,
        model: 'opus',
        prompts: 'a1b2c3d4',
        costUsd: 0.01 * (i + 1),
        budgetUsd: 1,
        durationS: 30,
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        turns: 2,
        denials: 0,
        lessons: i % 2,
        runId: `ONE-1-${Math.floor(i / 10)}`,
        testsHash: `h${i % 4}`,
        failingTests: i % 5 === 4 ? null : ['tests/one.test.ts::a'],
        verdict: i % 5 === 4 ? null : i % 7 === 3 ? 'deja_vu' : 'spinning',
        fpRules: 'shadow',
      });
    const pending = Number((await store.pool.query('SELECT count(*) AS n FROM report_pending')).rows[0]?.n);
    // Each insert statement takes the next tick; the one that takes a multiple of 64 folds every row
    // pending then, its own included: what is left is what came after the last of them.
    expect(pending).toBe((before + 70) % 64);
    await expectAllSame(store.pool, backend.name === 'postgres');
  }, 600_000);

  it("a database upgraded from schema version 11 gets version 12's tables from its rollup", async () => {
    const other = await backend.fresh();
    const pool = await rawPool(other.target);
    try {
      await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(readFileSync(join(ROOT, 'tests', 'fixtures', 'schema', 'v11.sql'), 'utf8'));
        await c.query('INSERT INTO chalk_schema (id, version) VALUES (1, 11)');
        await c.query(seedSql(2000));
        await c.query('COMMIT');
      } finally {
        c.release();
      }
      await awkwardRows(pool);
      expect(await applySchema(pool)).toEqual({ applied: true });
      await expectAllSame(pool, backend.name === 'postgres');
    } finally {
      await pool.end();
      await other.dispose();
    }
  }, 600_000);

  it('a database upgraded from schema version 9 is back-filled', async () => {
    const other = await backend.fresh();
    const pool = await rawPool(other.target);
    try {
      await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(readFileSync(join(ROOT, 'tests', 'fixtures', 'schema', 'v9.sql'), 'utf8'));
        await c.query('INSERT INTO chalk_schema (id, version) VALUES (1, 9)');
        await c.query(seedSql(2000));
        await c.query('COMMIT');
      } finally {
        c.release();
      }
      await awkwardRows(pool);
      expect(await applySchema(pool)).toEqual({ applied: true });
      await expectAllSame(pool, backend.name === 'postgres');
    } finally {
      await pool.end();
      await other.dispose();
    }
  }, 600_000);

  it('a copied database (chalk db copy) makes its rollup from the copied rows', async () => {
    const other = await backend.fresh();
    const target = await PgStore.open(other.target, 120_000);
    try {
      await target.pool.query(seedSql(500));
      await copyRows(store.pool, target.pool, () => {});
      await expectAllSame(target.pool, backend.name === 'postgres');
    } finally {
      await target.close();
      await other.dispose();
    }
  }, 600_000);
});
