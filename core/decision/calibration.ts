import type { StuckAnswerFacts } from '../ports/store.js';
import { trustKey } from './trust.js';

/**
 * Was a stuck answer right, and may the decider act yet (the calibration gate)?
 * Pure, and the one copy of both rules: the report card (core/report) and the
 * run's `on` mode (core/decision/stuck-tap.ts) read them from here. The
 * constants are the gate's, not settings.
 *
 * The judgement is computed when it is read, from facts the store gives
 * (`Store.decisions.stuckAnswers`: did a later loop of the run progress, was the
 * run detained), never stored: a run can still be going, or be detained after
 * the answer was recorded, and a stored verdict would go stale.
 */

export type { StuckAnswerFacts };

export const GATE = { minJudged: 20, minCorrectShare: 0.9 } as const;

/** `right`, `wrong` or `waiting` (nothing has happened yet that settles it). */
export type StuckJudgement = 'right' | 'wrong' | 'waiting';

/**
 * What happened next settles a stuck answer. A yes (stuck) was right when the
 * run was detained with no later progress, wrong when a later loop progressed
 * (a false stop), and waiting otherwise. A no was right when a later loop
 * progressed, wrong when the run was detained with none, and waiting otherwise.
 */
export function judgeStuck(a: Pick<StuckAnswerFacts, 'answer' | 'laterProgress' | 'detained'>): StuckJudgement {
  if (a.laterProgress) return a.answer === 'yes' ? 'wrong' : 'right';
  if (a.detained) return a.answer === 'yes' ? 'right' : 'wrong';
  return 'waiting';
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
 * such answer at or above t, judged by `judgeStuck`. Passes when judged >= 20 and
 * correct >= 90% of judged. Answers acted on (`on`) are not evidence: acting decides what happens next.
 */
export function gateAt(answers: readonly StuckAnswerFacts[], t: number): GateAt {
  const firstByRun = new Map<string, StuckAnswerFacts>();
  for (const a of answers) {
    if (a.mode !== 'shadow' || a.answer !== 'yes' || a.confidence < t) continue;
    if (!firstByRun.has(a.run)) firstByRun.set(a.run, a);
  }
  let correct = 0;
  let falseStops = 0;
  let waiting = 0;
  for (const a of firstByRun.values()) {
    const j = judgeStuck(a);
    if (j === 'wrong') falseStops++;
    else if (j === 'right') correct++;
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

/** A URL as the gate keys it: without credentials, query or a trailing slash (`chalk decider trust`'s form). */
export function gateUrl(url: string): string {
  try {
    return trustKey(url);
  } catch {
    return url.replace(/\/+$/, '');
  }
}

/**
 * The lowest of `levels` (ascending) at which the gate passes, or null: gateAt at each level, in
 * one sweep. A run's answer at threshold t is its first shadow yes at or above t, so as t rises it
 * moves along the run's record confidences (each answer more confident than every one before it):
 * on (previous record, this record] the run is judged by this record, above its last none.
 */
function firstPassing(list: readonly StuckAnswerFacts[], levels: readonly number[]): number | null {
  const records = new Map<string, StuckAnswerFacts[]>();
  for (const a of list) {
    if (a.mode !== 'shadow' || a.answer !== 'yes') continue;
    const r = records.get(a.run);
    if (!r) records.set(a.run, [a]);
    else if (a.confidence > (r.at(-1) as StuckAnswerFacts).confidence) r.push(a);
  }
  const tally = { right: 0, wrong: 0, waiting: 0 };
  const count = (a: StuckAnswerFacts | undefined, by: number) => {
    if (a) tally[judgeStuck(a)] += by;
  };
  // Each record's end: above its confidence the run moves to its next record (or to none).
  const moves: Array<{ at: number; from: StuckAnswerFacts; to: StuckAnswerFacts | undefined }> = [];
  for (const r of records.values()) {
    count(r[0], 1);
    r.forEach((a, i) => {
      moves.push({ at: a.confidence, from: a, to: r[i + 1] });
    });
  }
  moves.sort((a, b) => a.at - b.at);
  let next = 0;
  for (const t of levels) {
    for (; next < moves.length && (moves[next] as (typeof moves)[number]).at < t; next++) {
      const m = moves[next] as (typeof moves)[number];
      count(m.from, -1);
      count(m.to, 1);
    }
    const judged = tally.right + tally.wrong;
    if (judged >= GATE.minJudged && tally.right >= GATE.minCorrectShare * judged) return t;
  }
  return null;
}

function gateFor(url: string, model: string, list: readonly StuckAnswerFacts[], threshold: number): Calibration {
  const levels = [...new Set(list.filter((a) => a.mode === 'shadow' && a.answer === 'yes').map((a) => a.confidence))];
  levels.sort((a, b) => a - b);
  return { url, model, threshold, suggested: firstPassing(list, levels), ...gateAt(list, threshold) };
}

/** The gate per (URL, model with revision), over all history, at the configured threshold. */
export function calibrationGate(answers: readonly StuckAnswerFacts[], threshold: number): Calibration[] {
  const keys = new Map<string, StuckAnswerFacts[]>();
  for (const a of answers) {
    const k = JSON.stringify([a.url, a.model]);
    const list = keys.get(k);
    if (list) list.push(a);
    else keys.set(k, [a]);
  }
  return [...keys.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, list]) => {
      const [url, model] = JSON.parse(k) as [string, string];
      return gateFor(url, model, list, threshold);
    });
}

/** The gate of one decider URL and model (URLs compared without credentials or a trailing slash). */
export function calibrationOf(
  answers: readonly StuckAnswerFacts[],
  key: { url: string; model: string; threshold: number },
): Calibration {
  const url = gateUrl(key.url);
  const list = answers.filter((a) => gateUrl(a.url) === url && a.model === key.model);
  return gateFor(url, key.model, list, key.threshold);
}

/** Every model recorded for a decider URL, each with its gate, newest evidence last. */
export function calibrationsAt(answers: readonly StuckAnswerFacts[], url: string, threshold: number): Calibration[] {
  const key = gateUrl(url);
  const models = [...new Set(answers.filter((a) => gateUrl(a.url) === key).map((a) => a.model))];
  return models.map((model) => calibrationOf(answers, { url, model, threshold }));
}

/** One line for a calibration: the numbers and what they mean for `on`. */
export function describeCalibration(c: Calibration): string {
  const share = c.judged > 0 ? `${Math.round((100 * c.correct) / c.judged)}%` : 'none';
  const verdict = c.passes
    ? 'calibrated: CHALK_DECIDER=on acts'
    : `not calibrated: needs ${GATE.minJudged} judged with ${Math.round(GATE.minCorrectShare * 100)}% right`;
  return `${c.model} at ${c.url}: ${c.judged} judged shadow answers at ${c.threshold} (${c.correct} right, ${c.falseStops} false stops, ${share} right; ${c.waiting} waiting)${c.suggested !== null ? `, suggested threshold ${c.suggested}` : ''}; ${verdict}`;
}
