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

export function verdictLedger(runs: readonly LedgerRun[]): Ledger {
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
  for (const run of runs) {
    const judged = run.loops.filter(([, , v]) => v !== null && !UNJUDGEABLE.has(v));
    if (judged.length === 0) {
      if (run.loops.some(([, , v]) => v !== null)) out.blockerOnlyRuns++;
      continue;
    }
    if (run.mode === 'on') {
      out.onRuns++;
      continue;
    }
    if (run.mode !== 'shadow') continue;
    out.judgeableRuns++;
    const stopAt = run.loops.findIndex(([, , v]) => v !== null && (STOPPING_VERDICTS as readonly string[]).includes(v));
    const after = stopAt < 0 ? [] : run.loops.slice(stopAt + 1);
    const falseStop = after.some(([, p]) => p);
    if (falseStop) out.falseStops++;
    if (!run.detained) continue;
    out.detainedRuns++;
    out.noProgressCost += run.loops.filter(([, p]) => !p).reduce((s, [c]) => s + c, 0);
    if (judged.at(-1)?.[2] === 'improving') out.detainedImproving++;
    if (stopAt >= 0 && !falseStop) {
      const saved = after.reduce((s, [c]) => s + c, 0);
      const verdict = run.loops[stopAt]?.[2] as string;
      out.wouldHaveSaved += saved;
      out.savedByVerdict[verdict] = cents((out.savedByVerdict[verdict] ?? 0) + saved);
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
