import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCard } from '../../core/report/card.js';
import { loadReport, type RawReport } from '../../core/report/data.js';
import { PgStore } from '../../core/store/index.js';
import { SENTINELS, seedTelemetry } from '../helpers/report-seed.js';
import { BACKENDS } from './store/backends.js';

/**
 * The queries in share/dashboard/ against the seeded telemetry (tests/helpers/report-seed.ts),
 * on both stores, with every number worked out by hand from the seed:
 *   run 1 (acme, SNTL-4242): spec-check 0.05; continue 0.40 progressed; retries 0.35 (first),
 *     0.95 (repeat, 1 lesson, 2 denials), 0.50 (repeat), all failing the same test; detained;
 *     a stuck yes at 0.93 on the 0.95 loop and a rerank with no answer.
 *   run 2 (acme, SNTL-7): continue 0.20 and 0.25 (another model) progressed; review fail 0.10;
 *     fix-review 0.15 progressed; review pass 0.10; submitted.
 *   run 3 (globex, SNTL-8): continue 0.10 blocked; distill 0.02.
 */
describe.each(BACKENDS)('the report card queries on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;
  let all: RawReport;
  let acme: RawReport;

  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
    await seedTelemetry(store);
    all = await loadReport(store.pool, { days: 30, repo: null });
    acme = await loadReport(store.pool, { days: 30, repo: SENTINELS.repo });
  }, 240_000);
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  it('totals and events', () => {
    expect(all.summary.totals).toMatchObject({
      calls: 12,
      cost: 3.17, // 2.25 + 0.80 + 0.12
      loops: 8,
      loop_cost: 2.9, // 2.20 + 0.60 + 0.10
      checkpoints: 4, // 1 + 3
      no_progress_cost: 1.9, // 0.35 + 0.95 + 0.50 + 0.10
      tickets: 3,
      runs: 3,
      repositories: 2,
      denials: 2,
      loops_with_denials: 1,
      failed_loops: 3,
      failed_loops_no_tests: 0,
    });
    expect(all.summary.events).toEqual({ detentions: 1, submitted: 1, spec_blocked: 0, ready: 0 });
    expect(acme.summary.totals).toMatchObject({ calls: 10, tickets: 2, repositories: 1, cost: 3.05 });
  });

  it('spend by kind, the budget distribution, the checks and the verdicts', () => {
    const byKind = Object.fromEntries(all.summary.by_kind.map((k) => [k.kind, [k.calls, k.cost]]));
    expect(byKind).toEqual({
      retry: [3, 1.8],
      continue: [4, 0.95],
      review: [2, 0.2],
      'fix-review': [1, 0.15],
      'spec-check': [1, 0.05],
      distill: [1, 0.02],
    });
    // loop costs 0.10 0.15 0.20 0.25 | 0.35 0.40 0.50 0.95: median (0.25 + 0.35) / 2
    expect(all.summary.budget).toMatchObject({ cap: 1, max: 0.95, near_cap: 1 });
    expect(all.summary.budget.median).toBeCloseTo(0.3, 10);
    expect(all.summary.budget.buckets).toEqual([
      { bucket: 1, loops: 2 },
      { bucket: 2, loops: 2 },
      { bucket: 3, loops: 1 },
      { bucket: 4, loops: 1 },
      { bucket: 5, loops: 1 },
      { bucket: 9, loops: 1 },
    ]);
    expect(all.summary.checks).toEqual({
      review: { ran: 2, failed: 1, cost: 0.2, fix_loops: 1, fix_cost: 0.15 },
      spec_check: { ran: 1, failed: 0, cost: 0.05, blocked_specs: 0 },
    });
    expect(all.summary.verdicts).toEqual({ none: 4, first: 1, repeat: 2, blocked: 1 });
    expect(all.summary.detentions_by_reason).toEqual({ repeat: 1 });
    expect(all.summary.lessons).toMatchObject({
      opened: 1,
      resolved: 1,
      distilled: 1,
      fingerprinted: 1,
      scope_repo: 1,
    });
    expect(all.summary.failing_tests).toEqual([{ repo: SENTINELS.repo, test: SENTINELS.test, loops: 3, tickets: 1 }]);
    expect(all.summary.flaky_tests).toEqual([
      { repo: SENTINELS.repo, test: `${SENTINELS.test}_flaky`, loops: 1, tickets: 1 },
    ]);
    // every call is 8 turns; the days (one, or two across midnight) sum to the totals
    expect(all.summary.agent).toEqual([
      { status: 'ok', loops: 7, turns: 56 },
      { status: 'blocked', loops: 1, turns: 8 },
    ]);
    expect(all.summary.fp_rules).toEqual({ shadow: 8 });
    const days = all.summary.by_day;
    expect(days.reduce((a, d) => a + d.calls, 0)).toBe(12);
    expect(days.reduce((a, d) => a + d.no_progress_cost, 0)).toBeCloseTo(1.9, 10);
    expect(all.summary.by_prompts).toMatchObject([
      { prompts: SENTINELS.prompts, loops: 8, retries: 3, checkpoints: 4, cost: 3.17 },
    ]);
    const other = all.summary.by_model.find((m) => m.model === SENTINELS.otherModel);
    expect(other).toMatchObject({ loops: 1, checkpoints: 1, cost: 0.25 });
  });

  it('the ledger runs, lessons and the card built from them', () => {
    // run 1: loops 0.40 progressed, 0.35 first, 0.95 repeat, 0.50 repeat (detained); run 3: 0.10 blocked.
    expect(all.runs.ledger).toEqual([
      {
        mode: 'shadow',
        detained: false,
        judged: false,
        blocker_only: true,
        stop_verdict: null,
        false_stop: false,
        improving: false,
        runs: 1,
        np_cost: 0.1,
        saved: 0,
      },
      {
        mode: 'shadow',
        detained: true,
        judged: true,
        blocker_only: false,
        stop_verdict: 'repeat',
        false_stop: false,
        improving: false,
        runs: 1,
        np_cost: 1.8,
        saved: 0.5,
      },
    ]);
    expect(all.runs.verdictless_runs).toBe(0);
    // retries: loop 2 (after a passing loop: no failure to match), loop 3 (lesson) and loop 4 both after the same test failed.
    expect(all.runs.lessons_help).toEqual({
      all: { with: 1, with_passed: 0, without: 2, without_passed: 0 },
      same_failure: { with: 1, with_passed: 0, without: 1, without_passed: 0, failures: 1 },
    });
    const card = buildCard(all, {
      days: 30,
      repo: null,
      deciderThreshold: 0.9,
      fpRules: 'shadow',
      testReportSet: false,
    });
    // stopping at the first repeat (the 0.95 loop) saves the 0.50 after it, of 1.80 spent without progress.
    expect(card.ledger).toMatchObject({ judgeableRuns: 1, detainedRuns: 1, noProgressCost: 1.8, wouldHaveSaved: 0.5 });
    expect(card.ledger).toMatchObject({ falseStops: 0, blockerOnlyRuns: 1 });
    expect(card.grade.costPerCheckpoint).toBeCloseTo(3.17 / 4, 10);
    expect(card.tickets.map((t) => [t.ticket, t.state])).toEqual(
      expect.arrayContaining([
        [SENTINELS.ticket, 'detained'],
        ['SNTL-7', 'submitted'],
        ['SNTL-8', 'stopped'],
      ]),
    );
  });

  it('the decider: questions, no-answer reasons, and the stuck answer with what followed', () => {
    expect(all.decider).toMatchObject({ asked: 2, answered: 1, acted: 0, median_latency_ms: 840 });
    expect(all.decider.by_kind).toEqual({ stuck: 1, rerank: 1 });
    expect(all.decider.no_answer).toEqual([{ error: SENTINELS.deciderError, calls: 1 }]);
    expect(all.decider.answers).toEqual([
      {
        url: `${SENTINELS.deciderUrl}`,
        model: SENTINELS.deciderModel,
        run: SENTINELS.runId,
        mode: 'shadow',
        answer: 'yes',
        confidence: 0.93,
        in_window: true,
        later_progress: false, // the loop after it (0.50) did not progress
        detained: true,
      },
    ]);
    // another repository's window asks nothing
    const globex = { days: 30, repo: SENTINELS.repo2 };
    return loadReport(store.pool, globex).then((g) => expect(g.decider.asked).toBe(0));
  });
});
