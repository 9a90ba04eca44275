/**
 * Notes for next term: rule-based recommendations, each a pure function of the report's
 * numbers with its threshold stated here. No note is given before MIN_LOOPS loops.
 */

export const MIN_LOOPS = 20;

export const THRESHOLDS = {
  /** The cap is "far above" when the 90th-percentile loop costs under this share of it. */
  capShare: 0.25,
  /** A review that "never fails" has run at least this often without failing. */
  minReviews: 10,
  /** Retries compared with and without lessons need this many of each... */
  minRetries: 5,
  /** ...and lessons must raise the pass rate by at least this much. */
  lessonLift: 0.15,
  /** CHALK_TEST_REPORT: at least this many failed loops, and more than this share naming no test. */
  minFailedLoops: 10,
  noTestsShare: 0.5,
  /** Refused actions: in at least this share of loops. */
  denialShare: 0.05,
  /** A test failing in at least this many tickets is broken where every ticket starts (or flaky). */
  sharedTickets: 3,
} as const;

export interface NoteFacts {
  loops: number;
  /** CHALK_BUDGET_USD the latest loop ran under, or null. */
  cap: number | null;
  p90LoopCost: number | null;
  reviews: { ran: number; failed: number };
  /** Retries of the same failure, with and without lessons. */
  lessons: { with: number; withPassed: number; without: number; withoutPassed: number };
  /** The CHALK_FP_RULES mode in force now, and whether the ledger clears the bar for `on`. */
  fpRules: string;
  ledgerRecommendsOn: boolean;
  failedLoops: number;
  failedLoopsNoTests: number;
  testReportSet: boolean;
  loopsWithDenials: number;
  /** Tests and how many tickets they failed in. */
  failingTests: { test: string; tickets: number }[];
  /** Tests recorded flaky (failed, then passed on the same tree), and in how many loops. */
  flakyTests: { test: string; loops: number }[];
}

export interface Note {
  id: string;
  text: string;
}

type Rule = (f: NoteFacts) => Note | null;

const pct = (x: number) => `${Math.round(x * 100)}%`;
const usd = (x: number) => `$${x.toFixed(2)}`;

export const capFarAbove: Rule = (f) =>
  f.cap !== null && f.p90LoopCost !== null && f.cap > 0 && f.p90LoopCost < THRESHOLDS.capShare * f.cap
    ? {
        id: 'cap',
        text: `9 loops in 10 cost under ${usd(f.p90LoopCost)} against a cap of ${usd(f.cap)}: lower CHALK_BUDGET_USD to about ${usd(Math.max(0.01, 2 * f.p90LoopCost))} so a runaway loop stops sooner.`,
      }
    : null;

export const reviewNeverFails: Rule = (f) =>
  f.reviews.ran >= THRESHOLDS.minReviews && f.reviews.failed === 0
    ? {
        id: 'review',
        text: `The final review ran ${f.reviews.ran} times and never failed anything: it may not be earning its cost (tighten its prompt or turn it off).`,
      }
    : null;

export const lessonsHelp: Rule = (f) => {
  const { with: w, withPassed, without, withoutPassed } = f.lessons;
  if (w < THRESHOLDS.minRetries || without < THRESHOLDS.minRetries) return null;
  const a = withPassed / w;
  const b = withoutPassed / without;
  return a - b >= THRESHOLDS.lessonLift
    ? {
        id: 'lessons',
        text: `Retries with a lesson passed ${pct(a)} of the time against ${pct(b)} without, on the same failures: resolve detentions in office hours so more retries get one.`,
      }
    : null;
};

export const fpRulesOn: Rule = (f) =>
  f.ledgerRecommendsOn && f.fpRules !== 'on'
    ? {
        id: 'fp_rules',
        text: 'Stopping at the first stopping verdict would have saved at least a fifth of the no-progress spend with at most one false stop over 20+ detained runs: set CHALK_FP_RULES=on.',
      }
    : null;

export const testReport: Rule = (f) =>
  !f.testReportSet &&
  f.failedLoops >= THRESHOLDS.minFailedLoops &&
  f.failedLoopsNoTests > THRESHOLDS.noTestsShare * f.failedLoops
    ? {
        id: 'test_report',
        text: `${f.failedLoopsNoTests} of ${f.failedLoops} failed loops named no failing test: set CHALK_TEST_REPORT to the report the runner writes (JUnit XML, go test -json, jest/vitest/mocha JSON, TAP, trx) so verdicts and lessons can tell failures apart.`,
      }
    : null;

export const refusedActions: Rule = (f) =>
  f.loopsWithDenials > 0 && f.loopsWithDenials >= THRESHOLDS.denialShare * f.loops
    ? {
        id: 'denials',
        text: `${f.loopsWithDenials} of ${f.loops} loops had actions refused by the permission checks: allow what the agent needs, or say in the spec what it may not do.`,
      }
    : null;

export const sharedFailures: Rule = (f) => {
  const shared = f.failingTests.filter((t) => t.tickets >= THRESHOLDS.sharedTickets);
  const n = shared.length;
  return n > 0
    ? {
        id: 'shared_failures',
        text: `${n} test${n === 1 ? '' : 's'} failed in ${THRESHOLDS.sharedTickets} or more tickets (see "Which tests keep failing?"): broken on the base branch or flaky; fix ${n === 1 ? 'it' : 'them'} before the agents pay for ${n === 1 ? 'it' : 'them'} again.`,
      }
    : null;
};

export const flakyTests: Rule = (f) => {
  const n = f.flakyTests.length;
  const loops = f.flakyTests.reduce((s, t) => s + t.loops, 0);
  return n > 0
    ? {
        id: 'flaky',
        text: `${n} test${n === 1 ? '' : 's'} failed and then passed on the same tree in ${loops} loop${loops === 1 ? '' : 's'} (flaky; left out of fingerprints): make ${n === 1 ? 'it' : 'them'} deterministic, since every rerun costs rubric time.`,
      }
    : null;
};

export const RULES: readonly Rule[] = [
  capFarAbove,
  reviewNeverFails,
  lessonsHelp,
  fpRulesOn,
  testReport,
  refusedActions,
  sharedFailures,
  flakyTests,
];

export function notesForNextTerm(f: NoteFacts): Note[] {
  if (f.loops < MIN_LOOPS) return [];
  return RULES.map((r) => r(f)).filter((n): n is Note => n !== null);
}
