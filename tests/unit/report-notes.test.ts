import { describe, expect, it } from 'vitest';
import {
  capFarAbove,
  flakyTests,
  fpRulesOn,
  lessonsHelp,
  type NoteFacts,
  notesForNextTerm,
  refusedActions,
  reviewNeverFails,
  sharedFailures,
  testReport,
} from '../../core/report/notes.js';

/** Facts that trigger no note. */
const quiet: NoteFacts = {
  loops: 100,
  cap: 1,
  p90LoopCost: 0.5,
  reviews: { ran: 10, failed: 2 },
  lessons: { with: 10, withPassed: 5, without: 10, withoutPassed: 5 },
  fpRules: 'shadow',
  ledgerRecommendsOn: false,
  failedLoops: 10,
  failedLoopsNoTests: 5,
  testReportSet: false,
  loopsWithDenials: 0,
  failingTests: [{ test: 'a', tickets: 2 }],
  flakyTests: [],
};
const f = (over: Partial<NoteFacts>): NoteFacts => ({ ...quiet, ...over });

describe('notes for next term', () => {
  it('gives none for quiet facts, and none at all under 20 loops', () => {
    expect(notesForNextTerm(quiet)).toEqual([]);
    const loud = f({ p90LoopCost: 0.1, loopsWithDenials: 19, loops: 19 });
    expect(notesForNextTerm(loud)).toEqual([]);
    expect(notesForNextTerm({ ...loud, loops: 20 }).map((n) => n.id)).toEqual(['cap', 'denials']);
  });

  it.each([
    // the cap: p90 under a quarter of it
    { rule: capFarAbove, facts: f({ p90LoopCost: 0.24 }), fires: true },
    { rule: capFarAbove, facts: f({ p90LoopCost: 0.25 }), fires: false },
    { rule: capFarAbove, facts: f({ p90LoopCost: null }), fires: false },
    // the review: 10 runs, none failed
    { rule: reviewNeverFails, facts: f({ reviews: { ran: 10, failed: 0 } }), fires: true },
    { rule: reviewNeverFails, facts: f({ reviews: { ran: 9, failed: 0 } }), fires: false },
    { rule: reviewNeverFails, facts: f({ reviews: { ran: 40, failed: 1 } }), fires: false },
    // lessons: 5 of each, a lift of 15 points (6/10 - 3/10 = 0.3; 4/10 - 3/10 = 0.1)
    {
      rule: lessonsHelp,
      facts: f({ lessons: { with: 10, withPassed: 6, without: 10, withoutPassed: 3 } }),
      fires: true,
    },
    {
      rule: lessonsHelp,
      facts: f({ lessons: { with: 10, withPassed: 4, without: 10, withoutPassed: 3 } }),
      fires: false,
    },
    {
      rule: lessonsHelp,
      facts: f({ lessons: { with: 4, withPassed: 4, without: 10, withoutPassed: 0 } }),
      fires: false,
    },
    // fp rules: the ledger's bar, unless already on
    { rule: fpRulesOn, facts: f({ ledgerRecommendsOn: true }), fires: true },
    { rule: fpRulesOn, facts: f({ ledgerRecommendsOn: true, fpRules: 'on' }), fires: false },
    // test report: 10 failed loops, more than half naming no test
    { rule: testReport, facts: f({ failedLoops: 10, failedLoopsNoTests: 6 }), fires: true },
    { rule: testReport, facts: f({ failedLoops: 10, failedLoopsNoTests: 5 }), fires: false },
    { rule: testReport, facts: f({ failedLoops: 9, failedLoopsNoTests: 9 }), fires: false },
    { rule: testReport, facts: f({ failedLoopsNoTests: 10, testReportSet: true }), fires: false },
    // refused actions: 5% of loops
    { rule: refusedActions, facts: f({ loopsWithDenials: 5 }), fires: true },
    { rule: refusedActions, facts: f({ loopsWithDenials: 4 }), fires: false },
    // shared failures: a test failing in 3 tickets
    { rule: sharedFailures, facts: f({ failingTests: [{ test: 'a', tickets: 3 }] }), fires: true },
    { rule: sharedFailures, facts: f({ failingTests: [{ test: 'a', tickets: 2 }] }), fires: false },
    // flaky: any test recorded flaky
    { rule: flakyTests, facts: f({ flakyTests: [{ test: 'a', loops: 1 }] }), fires: true },
    { rule: flakyTests, facts: f({ flakyTests: [] }), fires: false },
  ])('$rule.name fires: $fires (case $#)', ({ rule, facts, fires }) => {
    expect(rule(facts) !== null).toBe(fires);
  });

  it('says the numbers it fired on', () => {
    expect(capFarAbove(f({ p90LoopCost: 0.2 }))?.text).toContain('lower CHALK_BUDGET_USD to about $0.40');
    expect(testReport(f({ failedLoops: 12, failedLoopsNoTests: 9 }))?.text).toMatch(/^9 of 12 failed loops/);
    const flaky = f({
      flakyTests: [
        { test: 'a', loops: 2 },
        { test: 'b', loops: 3 },
      ],
    });
    expect(flakyTests(flaky)?.text).toMatch(/^2 tests failed and then passed on the same tree in 5 loops/);
  });
});
