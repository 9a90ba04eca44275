import type { Answer } from '../protocol/codec.js';
import { type NoulQuestion, noul } from '../protocol/questions.js';
import { type Calibration, GATE } from './calibration.js';
import { readNoul } from './reading.js';

/**
 * The stuck question (seed 000, "The questions Chalk asks"): pure rules for
 * when it is asked, what its state holds and what its answer may do.
 */

/** The question's id in the request, and the `decisions.question` of its row. */
export const STUCK_ID = 'stuck';
export const STUCK_QUESTION: NoulQuestion = noul('Is the agent stuck on the same root cause as in the previous loop?');

/** The verdicts the fingerprint rules cannot settle: the only ones the decider is asked about. */
export const STUCK_VERDICTS = ['spinning', 'other'] as const;

/** The state's ceiling in characters (about 1,500 tokens). */
export const STUCK_STATE_MAX = 6_000;
/** Failing test ids listed per loop. */
export const STUCK_MAX_TESTS = 20;
/** Lines of `git diff --stat` kept (its tail: the summary line and the last files). */
export const STUCK_DIFFSTAT_LINES = 41;
/** Longest test id or first error line kept (the sandbox writes both; one must not crowd out the rest). */
const MAX_LINE = 300;

export interface LoopFacts {
  /** Empty both when none failed and when none were found: see `testsKnown`. */
  failingTests: readonly string[];
  firstError: string | null;
  /** False when the failing tests are UNKNOWN. */
  testsKnown?: boolean;
}

/** Whether a loop gets the stuck question: it failed, the rules are on or shadow, and its verdict is spinning or other. */
export function asksStuck(ev: { verdict: string; ended?: string; rulesMode: string }): boolean {
  return ev.rulesMode !== 'off' && ev.ended === 'failed' && (STUCK_VERDICTS as readonly string[]).includes(ev.verdict);
}

const oneLine = (s: string) => {
  const flat = s.replace(/[\r\n\t]+/g, ' ').trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE - 3)}...` : flat;
};

function loopLines(label: string, f: LoopFacts | undefined): string[] {
  const known = f !== undefined && f.testsKnown !== false;
  const tests = f?.failingTests ?? [];
  const listed = tests.slice(0, STUCK_MAX_TESTS).map(oneLine);
  const testLine = known
    ? `  failing tests (${tests.length}): ${listed.length > 0 ? listed.join(', ') : 'none'}${tests.length > STUCK_MAX_TESTS ? ', ...' : ''}`
    : '  failing tests: unknown';
  const error = f?.firstError ? oneLine(f.firstError) : '';
  return [`${label}:`, testLine, `  first error: ${error !== '' ? error : 'none found'}`];
}

/** The last `STUCK_DIFFSTAT_LINES` lines of `git diff --stat` output, each on one line; null when there are none. */
export function diffstatTail(output: string | null): string | null {
  if (output === null) return null;
  const lines = output
    .split('\n')
    .map((l) => l.replace(/\r/g, '').trimEnd())
    .filter((l) => l.trim() !== '');
  if (lines.length === 0) return null;
  return lines
    .slice(-STUCK_DIFFSTAT_LINES)
    .map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE - 3)}...` : l))
    .join('\n');
}

/**
 * The stuck question's state: for the loop before and the failed loop, the
 * failing tests and the first error, then the diffstat between their trees
 * (file names and line counts, never contents), at most STUCK_STATE_MAX characters.
 */
export function stuckState(o: { previous?: LoopFacts; current?: LoopFacts; diffstat: string | null }): string {
  const diff = diffstatTail(o.diffstat);
  const text = [
    ...loopLines('previous loop', o.previous),
    ...loopLines('current loop', o.current),
    'changes between the two loops (git diff --stat):',
    diff ?? '  none, or unknown',
  ].join('\n');
  return text.length > STUCK_STATE_MAX ? text.slice(0, STUCK_STATE_MAX) : text;
}

/** A tree id as the fingerprint records it (SHA-1 or SHA-256 hex), the only text spliced into the diffstat command. */
export const isTreeId = (id: string | null | undefined): id is string =>
  !!id && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(id);

/** What a stuck answer does, and how its row is recorded. */
export interface StuckOutcome {
  /** The mode the row is recorded under: `on` only when it could act. */
  recordedMode: 'shadow' | 'on';
  /** A confident yes under `on`, calibrated: the run is detained at once. */
  act: boolean;
  /** The confidence of the answer (max(p, 1 - p)), or null when there was none. */
  confidence: number | null;
  /** Under `on`, why it was held to shadow (said once per run), or null. */
  held: string | null;
}

export interface StuckPolicy {
  mode: 'shadow' | 'on';
  threshold: number;
  /**
   * Why the provider holds `on` to shadow whatever the calibration (`Decider.holdReason`, e.g. a
   * local service measured slower than a loop can wait), or null.
   */
  hold?: string | null;
  /**
   * The calibration of the answering model at this decider: null when it is
   * unknown (the store could not be read). Only asked under `on`.
   */
  calibration: (model: string) => Calibration | null;
  /** Under `on`: whether any model at this decider is calibrated (how a call with no answer is recorded). */
  anyCalibrated: boolean;
}

/** Whether an answer may act (the calibration gate, shared by the stuck question and the lesson rerank). */
export interface ActGate {
  recordedMode: 'shadow' | 'on';
  /** Under `on`, calibrated and not held: the answer may act. */
  may: boolean;
  /** Under `on`, why it was held to shadow (said once per run), or null. */
  held: string | null;
}

/**
 * The gate: in `shadow` nothing acts; in `on` an answer acts only when the answering model is
 * calibrated at this decider and the provider does not hold it; otherwise it is recorded as
 * `shadow` and `held` says why (only for an answer: a call with no answer, or a missing key, is
 * never the reason for the warning). A call with no answer is recorded `on` only when the decider
 * has a calibrated model and nothing holds it.
 */
export function actGate(reply: { model: string | null; answered: boolean } | null, policy: StuckPolicy): ActGate {
  if (policy.mode === 'shadow') return { recordedMode: 'shadow', may: false, held: null };
  const hold = policy.hold ?? null;
  if (!reply || reply.model === null) {
    return { recordedMode: policy.anyCalibrated && !hold ? 'on' : 'shadow', may: false, held: null };
  }
  if (hold) return { recordedMode: 'shadow', may: false, held: reply.answered ? hold : null };
  const c = policy.calibration(reply.model);
  if (!c) {
    return {
      recordedMode: 'shadow',
      may: false,
      held: reply.answered ? 'the calibration of the decider is unknown (the database could not be read)' : null,
    };
  }
  if (!c.passes) {
    return {
      recordedMode: 'shadow',
      may: false,
      held: reply.answered
        ? `${reply.model} at ${c.url} is not calibrated yet: ${c.judged} judged shadow answers at ${c.threshold}, ${c.correct} right (it needs ${GATE.minJudged} judged, ${Math.round(GATE.minCorrectShare * 100)}% right)`
        : null,
    };
  }
  return { recordedMode: 'on', may: true, held: null };
}

/**
 * The rule: the gate (actGate), and under it a yes at or above the threshold detains the run.
 */
export function stuckOutcome(
  reply: { answer: Answer | undefined; model: string | null } | null,
  policy: StuckPolicy,
): StuckOutcome {
  const reading = readNoul(reply?.answer);
  const confidence = reading.confidence;
  const gate = actGate(reply ? { model: reply.model, answered: reading.answer !== 'unknown' } : null, policy);
  const act = gate.may && reading.answer === 'yes' && (reading.confidence ?? 0) >= policy.threshold;
  return { recordedMode: gate.recordedMode, act, confidence, held: gate.held };
}
