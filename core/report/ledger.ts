import { STOPPING_VERDICTS } from '../fingerprint/verdict.js';

/**
 * "Would stopping early have paid?": the verdict ledger. Pure: replays runs recorded
 * under CHALK_FP_RULES=shadow as if the rules had been `on`.
 *
 * - A run is judgeable when at least one loop has a verdict other than blocked/agent_error.
 * - Stopping at the first stopping verdict (deja_vu, repeat, no_change) would have saved the
 *   spend of every later loop; when a later loop progressed, that stop would have been a
 *   **false stop** (and saved nothing, since the work that followed paid).
 * - Savings and no-progress spend are counted over detained runs (those runs' spend was lost anyway).
 * - Runs under `on` are counted apart; blocker-only runs (every verdict blocked/agent_error) too.
 */

const UNJUDGEABLE = new Set(['blocked', 'agent_error']);

/** One loop: its cost, whether it ticked a checkpoint, its verdict (null when it progressed or rules were off). */
export type LedgerLoop = [cost: number, progressed: boolean, verdict: string | null];

export interface LedgerRun {
  mode: string;
  detained: boolean;
  loops: LedgerLoop[];
}

export interface Ledger {
  /** Shadow-mode runs with at least one judgeable loop. */
  judgeableRuns: number;
  detainedRuns: number;
  /** Spend of loops that made no progress, in detained judgeable runs. */
  noProgressCost: number;
  /** Spend after the first stopping verdict, in detained runs that never progressed after it. */
  wouldHaveSaved: number;
  /** Runs that progressed after a stopping verdict. */
  falseStops: number;
  /** Detained runs whose last judged verdict was `improving` (converging when stopped). */
  detainedImproving: number;
  /** Savings by the stopping verdict that would have stopped the run. */
  savedByVerdict: Record<string, number>;
  /** Runs recorded under `on` (stopped early for real), counted apart. */
  onRuns: number;
  /** Runs whose every verdict was blocked or agent_error. */
  blockerOnlyRuns: number;
  /** Whether turning CHALK_FP_RULES on is recommended (see RECOMMEND). */
  recommendOn: boolean;
}

/** The bar for recommending CHALK_FP_RULES=on. */
export const RECOMMEND = { minDetainedRuns: 20, minSavedShare: 0.2, maxFalseStops: 1 } as const;

const cents = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * One run's part in the ledger: the per-run rules. The rollup (share/schema.sql,
 * chalk_report_runs_of) keeps the same facts for every run in SQL, and the tests hold it to this.
 */
export interface RunFacts {
  mode: string;
  detained: boolean;
  /** At least one loop has a verdict other than blocked/agent_error. */
  judged: boolean;
  /** Not judged, but some loop has a verdict (every one blocked or agent_error). */
  blockerOnly: boolean;
  /** The first stopping verdict, or null. */
  stopVerdict: string | null;
  /** A loop after the first stopping verdict progressed. */
  falseStop: boolean;
  /** Spend of the loops that made no progress. */
  noProgressCost: number;
  /** Spend of the loops after the first stopping verdict. */
  saved: number;
  /** The last judged verdict was `improving`. */
  improving: boolean;
}

export function runFacts(run: LedgerRun): RunFacts {
  const judged = run.loops.filter(([, , v]) => v !== null && !UNJUDGEABLE.has(v));
  const stopAt = run.loops.findIndex(([, , v]) => v !== null && (STOPPING_VERDICTS as readonly string[]).includes(v));
  const after = stopAt < 0 ? [] : run.loops.slice(stopAt + 1);
  return {
    mode: run.mode,
    detained: run.detained,
    judged: judged.length > 0,
    blockerOnly: judged.length === 0 && run.loops.some(([, , v]) => v !== null),
    stopVerdict: stopAt < 0 ? null : (run.loops[stopAt]?.[2] ?? null),
    falseStop: after.some(([, p]) => p),
    noProgressCost: run.loops.filter(([, p]) => !p).reduce((s, [c]) => s + c, 0),
    saved: after.reduce((s, [c]) => s + c, 0),
    improving: judged.at(-1)?.[2] === 'improving',
  };
}

/** Runs with the same facts, `runs` of them: their costs are the sums over those runs. */
export type FactsGroup = RunFacts & { runs: number };

/** The ledger from runs' facts (each group counted `runs` times, its costs already summed). */
export function ledgerOf(groups: Iterable<FactsGroup>): Ledger {
  const out: Ledger = {
    judgeableRuns: 0,
    detainedRuns: 0,
    noProgressCost: 0,
    wouldHaveSaved: 0,
    falseStops: 0,
    detainedImproving: 0,
    savedByVerdict: {},
    onRuns: 0,
    blockerOnlyRuns: 0,
    recommendOn: false,
  };
  for (const f of groups) {
    if (!f.judged) {
      if (f.blockerOnly) out.blockerOnlyRuns += f.runs;
      continue;
    }
    if (f.mode === 'on') {
      out.onRuns += f.runs;
      continue;
    }
    if (f.mode !== 'shadow') continue;
    out.judgeableRuns += f.runs;
    if (f.falseStop) out.falseStops += f.runs;
    if (!f.detained) continue;
    out.detainedRuns += f.runs;
    out.noProgressCost += f.noProgressCost;
    if (f.improving) out.detainedImproving += f.runs;
    if (f.stopVerdict !== null && !f.falseStop) {
      out.wouldHaveSaved += f.saved;
      out.savedByVerdict[f.stopVerdict] = cents((out.savedByVerdict[f.stopVerdict] ?? 0) + f.saved);
    }
  }
  out.noProgressCost = cents(out.noProgressCost);
  out.wouldHaveSaved = cents(out.wouldHaveSaved);
  out.recommendOn =
    out.detainedRuns >= RECOMMEND.minDetainedRuns &&
    out.noProgressCost > 0 &&
    out.wouldHaveSaved >= RECOMMEND.minSavedShare * out.noProgressCost &&
    out.falseStops <= RECOMMEND.maxFalseStops;
  return out;
}

/** The ledger of runs, one by one. */
export function verdictLedger(runs: readonly LedgerRun[]): Ledger {
  return ledgerOf(runs.map((r) => ({ ...runFacts(r), runs: 1 })));
}
