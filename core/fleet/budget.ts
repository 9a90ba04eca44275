/**
 * The fleet's spend ceiling, `CHALK_FLEET_BUDGET_USD`. Pure: the supervisor and the run
 * loop supply the recorded spend (the store's calls of the fleet's tickets).
 *
 * Every agent call is capped at `CHALK_BUDGET_USD` (`--max-budget-usd`), so a run at its
 * worst spends that cap on every call it may make: `CHALK_MAX_LOOPS` loops (fix-review loops
 * count among them), the spec check when `CHALK_SPEC_CHECK` is on, and with `CHALK_REVIEW` on
 * the first review and one more per fix round (`CHALK_REVIEW_ROUNDS`).
 */

export interface RunLimits {
  budgetUsd: number;
  maxLoops: number;
  specCheck: boolean;
  review: boolean;
  reviewRounds: number;
}

/** The most calls one run makes. */
export function worstCaseCalls(l: RunLimits): number {
  return l.maxLoops + (l.specCheck ? 1 : 0) + (l.review ? l.reviewRounds + 1 : 0);
}

/** What one run may spend at most, in dollars. */
export function worstCaseRunUsd(l: RunLimits): number {
  return round(l.budgetUsd * worstCaseCalls(l));
}

/** Dollars: cents, or four places below a cent so a small spend does not read as nothing. */
export const usd = (n: number): string => (n > 0 && n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`);

const round = (n: number) => Math.round(n * 1e6) / 1e6;

export interface FleetSpend {
  /** Recorded spend of each started workstream. */
  spent: readonly { ticket: string; usd: number; inFlight: boolean }[];
}

/**
 * What the fleet has spent or may still spend: each finished workstream at its recorded
 * spend, each one in flight at the larger of its recorded spend and a run's worst case
 * (it may still spend that much before it stops).
 */
export function committedUsd(s: FleetSpend, worstCase: number): number {
  return round(s.spent.reduce((sum, w) => sum + (w.inFlight ? Math.max(w.usd, worstCase) : w.usd), 0));
}

/** Whether one more run may start under the ceiling (none: always). */
export function mayStart(o: { ceiling: number | null; committed: number; worstCase: number }): boolean {
  return o.ceiling === null || o.committed + o.worstCase <= o.ceiling + 1e-9;
}

/** The `fleet budget` line: why no more starts, or why a run stopped. */
export function budgetLine(o: { epic: string; ceiling: number; committed: number; next: number }): string {
  return `fleet budget: ${o.epic} has spent or committed ${usd(o.committed)} of CHALK_FLEET_BUDGET_USD=${usd(o.ceiling)}, and the next would need up to ${usd(o.next)}`;
}

/** The ceiling from the key's value ('' is none). */
export const ceilingOf = (value: string): number | null => (value === '' ? null : Number(value));
