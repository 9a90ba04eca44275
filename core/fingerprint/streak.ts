import type { Fingerprint } from './fingerprint.js';
import { isStopping, type LoopEnd, type Verdict, verdictFor } from './verdict.js';

/**
 * `CHALK_FP_RULES`:
 * - `off`: nothing is computed or recorded (no fingerprint, no verdict);
 * - `shadow`: fingerprints and verdicts are computed and recorded, nothing else changes;
 * - `on`: as shadow, and a stopping verdict (`deja_vu`, `repeat`, `no_change`) detains the run at once.
 */
export type RulesMode = 'off' | 'shadow' | 'on';

/** A baseline keeps the verdict its loop was given. */
export interface JudgedFingerprint extends Fingerprint {
  verdict: Verdict;
}

export interface Judgement {
  /** null for a progressed loop, and always under `off`. */
  verdict: Verdict | null;
  /** The baseline this loop was judged against (the stuck question's "previous loop"). */
  previous: JudgedFingerprint | null;
  /** True when, under `on`, this verdict detains the run. */
  stop: boolean;
}

/** Whether a loop's rubric run is fingerprinted: only with rules not off, and only when the agent finished. */
export function shouldFingerprint(mode: RulesMode, agentFinished: boolean): boolean {
  return mode !== 'off' && agentFinished;
}

/** True when a verdict detains the run under this mode. */
export function stopsRun(mode: RulesMode, verdict: Verdict | null): boolean {
  return mode === 'on' && isStopping(verdict);
}

/**
 * The non-progress streak of one run. Progress clears the baseline; a loop
 * that ended `failed` or `passed` becomes the new baseline (verdict included);
 * `blocked` and `agent_error` loops never do.
 */
export class VerdictStreak {
  #baseline: JudgedFingerprint | null = null;

  constructor(readonly mode: RulesMode) {}

  get baseline(): JudgedFingerprint | null {
    return this.#baseline;
  }

  judge(ended: LoopEnd, current: Fingerprint | null, openMatch = false): Judgement {
    const previous = this.#baseline;
    if (this.mode === 'off') return { verdict: null, previous, stop: false };
    if (ended === 'progressed') {
      this.#baseline = null;
      return { verdict: null, previous, stop: false };
    }
    const verdict = verdictFor({ ended, baseline: previous, current, openMatch });
    if ((ended === 'failed' || ended === 'passed') && current) this.#baseline = { ...current, verdict };
    return { verdict, previous, stop: stopsRun(this.mode, verdict) };
  }
}
