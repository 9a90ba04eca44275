/**
 * "Is the decider worth asking?": were its confident answers right, and may it act yet
 * (the calibration gate). Pure; the constants are the gate's, not settings.
 */

/** One stuck answer with a confidence, and what the run did after it. */
export interface StuckAnswer {
  url: string;
  model: string;
  run: string;
  mode: string;
  answer: 'yes' | 'no';
  confidence: number;
  inWindow: boolean;
  /** A later loop of the run ticked a checkpoint. */
  laterProgress: boolean;
  detained: boolean;
}

export const GATE = { minJudged: 20, minCorrectShare: 0.9 } as const;
export const BANDS = [
  { from: 0.5, to: 0.7 },
  { from: 0.7, to: 0.9 },
  { from: 0.9, to: 1 },
] as const;

export interface Band {
  band: string;
  answers: number;
  right: number;
}

/**
 * Were confident answers right? Window answers by confidence band (the last band includes 1):
 * a yes was right when no later loop progressed, a no when one did. Below 0.5: not counted.
 */
export function confidenceBands(answers: readonly StuckAnswer[]): Band[] {
  return BANDS.map(({ from, to }) => {
    const inBand = answers.filter(
      (a) => a.inWindow && a.confidence >= from && (a.confidence < to || (to === 1 && a.confidence <= 1)),
    );
    const right = inBand.filter((a) => (a.answer === 'yes' ? !a.laterProgress : a.laterProgress)).length;
    return { band: `${from.toFixed(1)}–${to.toFixed(1)}`, answers: inBand.length, right };
  });
}

export interface GateAt {
  correct: number;
  falseStops: number;
  waiting: number;
  judged: number;
  passes: boolean;
}

/**
 * The gate at threshold t over shadow "stuck = yes" answers: each run counts once, by its first
 * such answer at or above t. Correct: no later progress and the run was detained; false stop:
 * a later loop progressed; waiting: neither yet. Passes when judged >= 20 and correct >= 90% of judged.
 */
export function gateAt(answers: readonly StuckAnswer[], t: number): GateAt {
  const firstByRun = new Map<string, StuckAnswer>();
  for (const a of answers) {
    if (a.mode !== 'shadow' || a.answer !== 'yes' || a.confidence < t) continue;
    if (!firstByRun.has(a.run)) firstByRun.set(a.run, a);
  }
  let correct = 0;
  let falseStops = 0;
  let waiting = 0;
  for (const a of firstByRun.values()) {
    if (a.laterProgress) falseStops++;
    else if (a.detained) correct++;
    else waiting++;
  }
  const judged = correct + falseStops;
  return {
    correct,
    falseStops,
    waiting,
    judged,
    passes: judged >= GATE.minJudged && correct >= GATE.minCorrectShare * judged,
  };
}

export interface Calibration extends GateAt {
  url: string;
  model: string;
  threshold: number;
  /** The lowest confidence seen at which the gate would pass, or null. */
  suggested: number | null;
}

/** The gate per (URL, model with revision), over all history, at the configured threshold. */
export function calibrationGate(answers: readonly StuckAnswer[], threshold: number): Calibration[] {
  const keys = new Map<string, StuckAnswer[]>();
  for (const a of answers) {
    const k = JSON.stringify([a.url, a.model]);
    keys.set(k, [...(keys.get(k) ?? []), a]);
  }
  return [...keys.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, list]) => {
      const [url, model] = JSON.parse(k) as [string, string];
      const levels = [
        ...new Set(list.filter((a) => a.mode === 'shadow' && a.answer === 'yes').map((a) => a.confidence)),
      ];
      levels.sort((a, b) => a - b);
      const suggested = levels.find((t) => gateAt(list, t).passes) ?? null;
      return { url, model, threshold, suggested, ...gateAt(list, threshold) };
    });
}
