import { describe, expect, it } from 'vitest';
import { type LedgerRun, verdictLedger } from '../../core/report/ledger.js';

const F = false;
const P = true;

describe('the verdict ledger (would stopping early have paid?)', () => {
  it('replays shadow runs on a fixture worked out by hand', () => {
    const runs: LedgerRun[] = [
      // A: detained; stops at the first repeat (loop 3): saves 0.30 + 0.20 = 0.50; no progress 0.5+0.4+0.3+0.2 = 1.40.
      {
        mode: 'shadow',
        detained: true,
        loops: [
          [1.0, P, null],
          [0.5, F, 'first'],
          [0.4, F, 'repeat'],
          [0.3, F, 'no_change'],
          [0.2, F, 'repeat'],
        ],
      },
      // B: not detained; stops at no_change, then progresses: a false stop, no savings, no spend counted.
      {
        mode: 'shadow',
        detained: false,
        loops: [
          [0.2, F, 'first'],
          [0.3, F, 'no_change'],
          [0.6, P, null],
        ],
      },
      // C: detained while improving; no stopping verdict; no progress 0.25 + 0.25 = 0.50.
      {
        mode: 'shadow',
        detained: true,
        loops: [
          [0.25, F, 'first'],
          [0.25, F, 'improving'],
        ],
      },
      // D: under `on`: counted apart.
      {
        mode: 'on',
        detained: true,
        loops: [
          [0.1, F, 'first'],
          [0.1, F, 'repeat'],
        ],
      },
      // E: a blocker only: counted apart.
      { mode: 'shadow', detained: true, loops: [[0.3, F, 'blocked']] },
      // F: detained; deja_vu on loop 1 saves the 0.40 after it; no progress 0.2 + 0.4 = 0.60.
      {
        mode: 'shadow',
        detained: true,
        loops: [
          [0.2, F, 'deja_vu'],
          [0.4, F, 'spinning'],
        ],
      },
      // G: a mode not known: not judged.
      { mode: 'unknown', detained: true, loops: [[0.9, F, 'repeat']] },
    ];
    expect(verdictLedger(runs)).toEqual({
      judgeableRuns: 4, // A, B, C, F
      detainedRuns: 3, // A, C, F
      noProgressCost: 2.5, // 1.40 + 0.50 + 0.60
      wouldHaveSaved: 0.9, // 0.50 + 0.40
      falseStops: 1, // B
      detainedImproving: 1, // C
      savedByVerdict: { repeat: 0.5, deja_vu: 0.4 },
      onRuns: 1,
      blockerOnlyRuns: 1,
      recommendOn: false, // 3 detained runs < 20
    });
  });

  const many = (n: number, loops: LedgerRun['loops'], detained = true): LedgerRun[] =>
    Array.from({ length: n }, () => ({ mode: 'shadow', detained, loops }));
  const stalls: LedgerRun['loops'] = [
    [0.5, F, 'first'],
    [0.5, F, 'repeat'],
    [0.5, F, 'repeat'],
  ];
  const falseStop: LedgerRun['loops'] = [
    [0.5, F, 'repeat'],
    [0.5, P, null],
  ];

  it.each([
    // 20 runs: no progress 20 x 1.5 = 30, saved 20 x 0.5 = 10 >= 6: on.
    { name: '20 detained runs saving a third', runs: many(20, stalls), on: true },
    { name: '19 detained runs', runs: many(19, stalls), on: false },
    { name: 'one false stop is allowed', runs: [...many(20, stalls), ...many(1, falseStop, false)], on: true },
    { name: 'two false stops are not', runs: [...many(20, stalls), ...many(2, falseStop, false)], on: false },
    // each: no progress 0.8 + 0.1 + 0.1 = 1.0, saved 0.1: 10% < 20%.
    {
      name: 'savings under a fifth',
      runs: many(20, [
        [0.8, F, 'first'],
        [0.1, F, 'repeat'],
        [0.1, F, 'other'],
      ]),
      on: false,
    },
    // each: no progress 0.3 + 0.1 + 0.1 = 0.5, saved 0.1: exactly 20%.
    {
      name: 'savings of exactly a fifth',
      runs: many(20, [
        [0.3, F, 'first'],
        [0.1, F, 'no_change'],
        [0.1, F, 'other'],
      ]),
      on: true,
    },
  ])('recommends CHALK_FP_RULES=on: $name -> $on', ({ runs, on }) => {
    expect(verdictLedger(runs).recommendOn).toBe(on);
  });
});
