import { describe, expect, it } from 'vitest';
import { calibrationGate, confidenceBands, gateAt, type StuckAnswer } from '../../core/report/calibration.js';

const a = (over: Partial<StuckAnswer>): StuckAnswer => ({
  url: 'http://127.0.0.1:8765/',
  model: 'm@1',
  run: 'r',
  mode: 'shadow',
  answer: 'yes',
  confidence: 0.95,
  inWindow: true,
  laterProgress: false,
  detained: true,
  ...over,
});

const runs = (n: number, prefix: string, over: Partial<StuckAnswer>) =>
  Array.from({ length: n }, (_, i) => a({ run: `${prefix}${i}`, ...over }));

describe('were confident answers right? (bands)', () => {
  it('counts window answers by band on a fixture worked out by hand', () => {
    const answers = [
      a({ run: '1', answer: 'yes', confidence: 0.6 }), // 0.5-0.7, right (no later progress)
      a({ run: '2', answer: 'no', confidence: 0.65, laterProgress: true }), // 0.5-0.7, right
      a({ run: '3', answer: 'yes', confidence: 0.75, laterProgress: true }), // 0.7-0.9, wrong
      a({ run: '4', answer: 'yes', confidence: 0.9 }), // 0.9-1, right (0.9 opens the band)
      a({ run: '5', answer: 'yes', confidence: 1 }), // 0.9-1, right (1 is in the last band)
      a({ run: '6', answer: 'no', confidence: 0.95 }), // 0.9-1, wrong (no later progress)
      a({ run: '7', answer: 'yes', confidence: 0.4 }), // below 0.5: not counted
      a({ run: '8', answer: 'yes', confidence: 0.95, inWindow: false }), // outside the window
    ];
    expect(confidenceBands(answers)).toEqual([
      { band: '0.5–0.7', answers: 2, right: 2 },
      { band: '0.7–0.9', answers: 1, right: 0 },
      { band: '0.9–1.0', answers: 3, right: 2 },
    ]);
  });
});

describe('were confident answers right? (answers grouped with a count)', () => {
  it('counts a group as its count, as the answers one by one', () => {
    const one = [
      a({ answer: 'no', confidence: 0.8, laterProgress: true }),
      a({ answer: 'no', confidence: 0.8, laterProgress: true }),
      a({ answer: 'no', confidence: 0.8, laterProgress: true }),
      a({ mode: 'on', confidence: 0.95, laterProgress: true }),
      a({ mode: 'on', confidence: 0.95, laterProgress: true }),
    ];
    const grouped = [
      a({ answer: 'no', confidence: 0.8, laterProgress: true, count: 3 }),
      a({ mode: 'on', confidence: 0.95, laterProgress: true, count: 2 }),
    ];
    expect(confidenceBands(grouped)).toEqual(confidenceBands(one));
    expect(confidenceBands(grouped)).toEqual([
      { band: '0.5–0.7', answers: 0, right: 0 },
      { band: '0.7–0.9', answers: 3, right: 3 },
      { band: '0.9–1.0', answers: 2, right: 0 },
    ]);
  });
});

describe('may it act yet? (the calibration gate)', () => {
  // 18 correct at 0.95, 2 false stops at 0.92, 1 waiting at 0.97, and answers the gate ignores.
  const base = [
    ...runs(18, 'ok', { confidence: 0.95 }),
    ...runs(2, 'fs', { confidence: 0.92, laterProgress: true, detained: false }),
    a({ run: 'wait', confidence: 0.97, detained: false }),
    a({ run: 'ok0', confidence: 0.99, laterProgress: true }), // a second answer of run ok0: only its first counts
    a({ run: 'on', mode: 'on', confidence: 0.99, laterProgress: true }), // taken under on: excluded
    a({ run: 'no', answer: 'no', confidence: 0.99, laterProgress: true }), // a no: not evidence
  ];

  it.each([
    // judged 18 + 2 = 20, correct 18 >= 0.9 x 20 = 18: passes.
    { t: 0.9, correct: 18, falseStops: 2, waiting: 1, judged: 20, passes: true },
    // the false stops at 0.92 drop out: judged 18 < 20.
    { t: 0.93, correct: 18, falseStops: 0, waiting: 1, judged: 18, passes: false },
    // at 0.98 only ok0's second answer (0.99, later progress) is at or above: one false stop.
    { t: 0.98, correct: 0, falseStops: 1, waiting: 0, judged: 1, passes: false },
  ])('at $t: $correct correct, $falseStops false stops, $waiting waiting', ({ t, ...want }) => {
    expect(gateAt(base, t)).toEqual(want);
  });

  it('counts each run once, by its first answer at or above the level', () => {
    const list = [
      a({ run: 'x', confidence: 0.85, laterProgress: true }),
      a({ run: 'x', confidence: 0.95, laterProgress: false }),
    ];
    expect(gateAt(list, 0.8)).toMatchObject({ correct: 0, falseStops: 1 });
    expect(gateAt(list, 0.9)).toMatchObject({ correct: 1, falseStops: 0 });
  });

  it('judges per URL and model, suggesting the lowest confidence seen that passes', () => {
    const other = runs(18, 'b', { model: 'm@2', confidence: 0.95 }).concat(
      runs(3, 'bf', { model: 'm@2', confidence: 0.92, laterProgress: true }),
    );
    const gates = calibrationGate([...base, ...other], 0.9);
    expect(gates.map((g) => [g.model, g.judged, g.correct, g.falseStops, g.passes, g.suggested])).toEqual([
      // levels 0.92, 0.95, 0.97, 0.99: at 0.92 the same 18/20 as at 0.9.
      ['m@1', 20, 18, 2, true, 0.92],
      // 18 of 21 < 18.9 at 0.9 and 0.92; from 0.95 only 18 judged: never passes.
      ['m@2', 21, 18, 3, false, null],
    ]);
    expect(gates[0]?.threshold).toBe(0.9);
  });
});

describe('the suggested threshold in one sweep', () => {
  /** mulberry32, so the generated answers are the same every run. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  it('is the lowest level at which gateAt passes, on generated answers with repeats, ties and records', () => {
    const rnd = random(9);
    let passing = 0;
    for (let round = 0; round < 60; round++) {
      const right = 0.75 + rnd() * 0.25;
      const answers = Array.from({ length: 20 + Math.floor(rnd() * 200) }, () =>
        a({
          run: `r${Math.floor(rnd() * 40)}`,
          mode: rnd() < 0.8 ? 'shadow' : 'on',
          answer: rnd() < 0.8 ? 'yes' : 'no',
          // Three decimals over a narrow range: many answers share a confidence.
          confidence: Math.round((0.8 + rnd() * 0.2) * 1000) / 1000,
          laterProgress: rnd() > right,
          detained: rnd() < 0.9,
        }),
      );
      const levels = [
        ...new Set(answers.filter((x) => x.mode === 'shadow' && x.answer === 'yes').map((x) => x.confidence)),
      ];
      levels.sort((x, y) => x - y);
      const want = levels.find((t) => gateAt(answers, t).passes) ?? null;
      const [gate] = calibrationGate(answers, 0.9);
      expect(gate?.suggested, `round ${round}`).toBe(want);
      if (want !== null) passing++;
    }
    // Some rounds pass somewhere and some never do.
    expect(passing).toBeGreaterThan(5);
    expect(passing).toBeLessThan(55);
  });
});
