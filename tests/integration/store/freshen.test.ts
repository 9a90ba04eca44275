import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCard } from '../../../core/report/dashboard.js';
import { CARD_TABLES, freshenCardStats, PgStore } from '../../../core/store/index.js';
import { BACKENDS, ROOT } from './backends.js';

/**
 * The report card analyzes what it reads before reading it (core/store/freshen.ts): the embedded
 * store has no autovacuum, and a schema upgrade fills the rollup unanalyzed. Autovacuum is off on
 * these tables here, so nothing but the card analyzes them, on both databases.
 */
const seedSql = (rows: number) =>
  readFileSync(join(ROOT, 'tests', 'fixtures', 'telemetry-seed.sql'), 'utf8')
    .replaceAll('{{RUNS}}', String(rows))
    .replace(/^ANALYZE;$/m, '');

const estimates = async (store: PgStore) =>
  Object.fromEntries(
    (
      await store.pool.query<{ t: string; reltuples: number }>(
        `SELECT t, (SELECT reltuples FROM pg_class WHERE oid = to_regclass(t)) AS reltuples FROM unnest($1::text[]) t`,
        [CARD_TABLES],
      )
    ).rows.map((r) => [r.t, Number(r.reltuples)]),
  );

describe.each(BACKENDS)('the card freshens the planner statistics on $name', (backend) => {
  let db: Awaited<ReturnType<(typeof backend)['fresh']>>;
  let store: PgStore;
  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
    for (const t of CARD_TABLES) await store.pool.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false)`);
  }, 180_000);
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  it('analyzes the tables never analyzed, then only after runs grew by a tenth', async () => {
    expect(seedSql(1).includes('ANALYZE')).toBe(false);
    await store.pool.query(seedSql(2_000));
    expect((await estimates(store)).report_loops).toBe(-1);

    const settings = { days: 366, repo: null, deciderThreshold: 0.8, fpRules: 'shadow', testReportSet: false };
    const card = await readCard(store.pool, settings, { for: 'dashboard' });
    expect(card.raw.summary.totals.calls).toBeGreaterThan(0);
    const after = await estimates(store);
    for (const t of CARD_TABLES) expect(after[t], t).toBeGreaterThanOrEqual(0);
    const loops = await store.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM report_loops');
    expect(after.report_loops).toBeGreaterThan(0);
    expect(Math.abs((after.report_loops as number) - (loops.rows[0]?.n as number))).toBeLessThanOrEqual(1);

    expect(await freshenCardStats(store.pool)).toEqual([]);
    // A tenth more runs and 50 is autovacuum's margin: 100 more of 2,000 stays within it, 300 more does not.
    const more = (n: number) =>
      store.pool.query(
        `INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts,
           cost_usd, budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
           turns, denials, lessons) SELECT 'r', 'T-' || g, 'b', 1, 'continue', 'ok', 0, true, 'm', 'p',
           0.1, 1, 1, 0, 0, 0, 0, 1, 0, 0 FROM generate_series(1, $1::int) g`,
        [n],
      );
    await more(100);
    expect(await freshenCardStats(store.pool)).toEqual([]);
    await more(200);
    expect(await freshenCardStats(store.pool)).toEqual([...CARD_TABLES]);
    expect(await freshenCardStats(store.pool)).toEqual([]);
  }, 180_000);
});
