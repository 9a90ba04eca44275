/**
 * "Is the decider worth asking?": were its confident answers right, and may it act yet.
 * Pure. The gate and the judgement of one answer are core/decision/calibration.ts's (the
 * run's `on` mode reads the same rule); the confidence bands are the report card's own.
 */
import type { StuckAnswerFacts } from '../decision/calibration.js';

export {
  type Calibration,
  calibrationGate,
  GATE,
  type GateAt,
  gateAt,
} from '../decision/calibration.js';

/**
 * One stuck answer with a confidence, what the run did after it, and whether it is in the report's
 * window; `count` answers alike (the card reads the window's answers other than shadow yeses
 * grouped: the bands count them, the gate never reads them), 1 when absent.
 */
export interface StuckAnswer extends StuckAnswerFacts {
  inWindow: boolean;
  count?: number;
}

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
    const count = (list: readonly StuckAnswer[]) => list.reduce((n, a) => n + (a.count ?? 1), 0);
    const right = count(inBand.filter((a) => (a.answer === 'yes' ? !a.laterProgress : a.laterProgress)));
    return { band: `${from.toFixed(1)}–${to.toFixed(1)}`, answers: count(inBand), right };
  });
}
