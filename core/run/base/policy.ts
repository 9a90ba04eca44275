import type { LoopEnd } from '../../fingerprint/verdict.js';
import type { LoopKind } from '../../ports/agent.js';
import { type DetentionKind, type LoopOutcomeFacts, loopOutcome, reasons } from './detention-reasons.js';
import { loopMode } from './prompt.js';

/**
 * The loop's decisions, pure: which mode the next loop runs in, how a loop
 * ended, whether it progressed, and when a limit detains the run. The
 * orchestration (run-ticket.ts) does the I/O and asks these.
 */

export interface Limits {
  /** `CHALK_MAX_LOOPS`: loops per run. */
  maxLoops: number;
  /** `CHALK_MAX_RETRIES`: consecutive loops without progress tolerated. */
  maxRetries: number;
  /** `CHALK_REVIEW_ROUNDS`: fix-review rounds before a failing review detains. */
  reviewRounds: number;
}

/** A detention the policy asks for (the orchestration carries it out). */
export interface DetainRequest {
  kind: DetentionKind;
  reason: string;
  detail: string;
  /** guard: the files the guard refused, for the `next:` line. */
  files?: readonly string[];
  /** How a limit or the sandbox ended the last loop's rubric or agent call, for the `next:` line. */
  ending?: string;
}

/** What the loop carries from one iteration to the next. */
export class LoopState {
  /** Loops run so far (continue, retry and fix-review all count). */
  loop = 0;
  /** Consecutive loops without progress. */
  failures = 0;
  /** Reviews that failed. */
  failedReviews = 0;
  /** Retry feedback for the next loop; '' when the last loop progressed. */
  feedback = '';
  /** Review findings waiting for a fix-review loop; '' when none. */
  findings = '';
  /** Loops the guard refused in this run (progress does not reset it). */
  guarded = 0;
}

/** The counts that carry over when a run is resumed (resume.ts): what the limits are measured on. */
export type LoopCounts = Pick<LoopState, 'loop' | 'failures' | 'guarded' | 'failedReviews'>;

/** The counts of a state, to record. */
export const countsOf = (s: LoopState): LoopCounts => ({
  loop: s.loop,
  failures: s.failures,
  guarded: s.guarded,
  failedReviews: s.failedReviews,
});

/** The guarded loop that detains the run: the second one, unless CHALK_MAX_RETRIES runs out first. */
export const GUARDED_LOOPS_DETAIN = 2;

/**
 * The mode of the next loop: `fix-review` when every checkpoint is ticked
 * (findings are pending), `retry` after a loop without progress, else
 * `continue` (prompt.ts's loopMode, the one rule).
 */
export function chooseMode(open: number, feedback: string): LoopKind {
  return loopMode(open, feedback);
}

/** True when the next step is the final review: nothing open and no findings pending. */
export function reviewDue(open: number, state: Pick<LoopState, 'findings'>): boolean {
  return open === 0 && state.findings === '';
}

/**
 * A failed review: either its findings go to a fix-review loop, or (past
 * `CHALK_REVIEW_ROUNDS` failures' worth of rounds) the run is detained.
 */
export function afterFailedReview(state: LoopState, limits: Limits, findings: string): DetainRequest | null {
  state.failedReviews += 1;
  if (state.failedReviews > limits.reviewRounds) {
    return { kind: 'review', reason: reasons.review(limits.reviewRounds), detail: findings };
  }
  state.findings = findings;
  return null;
}

/** Starts the next loop: its number, or a loop-limit detention past `CHALK_MAX_LOOPS`. */
export function startLoop(state: LoopState, limits: Limits, open: number): DetainRequest | number {
  state.loop += 1;
  if (state.loop > limits.maxLoops) {
    return { kind: 'loop_limit', reason: reasons.loopLimit(limits.maxLoops, open), detail: '' };
  }
  return state.loop;
}

export type LoopFacts = LoopOutcomeFacts;

export interface LoopEnding {
  ended: Exclude<LoopEnd, 'blocked'>;
  /** Why the loop did not progress; '' when it did. */
  reason: string;
  /** How a limit or the sandbox ended the agent call or the rubric (the `next:` line says what to do). */
  ending?: string;
  /** Present only when the guard refused the loop (it then ended `failed`): the files it named. */
  guarded?: string[];
  /** True when the sandbox's commits were refused on their way home (it then ended `failed`). */
  refused?: true;
}

/**
 * How a loop that was not blocked ended. A loop the guard refused failed with
 * the guard's reason, whatever it ticked; then the agent's failure (its rubric
 * result says nothing about its work), then the rubric, then progress: a
 * checkpoint ticked, or a green fix-review loop.
 */
export function classifyLoop(f: LoopFacts): LoopEnding {
  const o = loopOutcome({ ...f, answer: null });
  if (o.ended === 'blocked') throw new Error('a blocked loop is detained before it is classified');
  if ('guarded' in o) return { ended: o.ended, reason: o.reason, guarded: o.guarded };
  if ('refused' in o) return { ended: o.ended, reason: o.reason, refused: true };
  if ('ending' in o && o.ending) return { ended: o.ended, reason: o.reason, ending: o.ending };
  return { ended: o.ended, reason: o.reason ?? '' };
}

/**
 * What the next (retry) loop is told after a loop the guard refused: the
 * guard's reason and what to do about it. The rubric's output is left out: it
 * says nothing about why the loop was refused.
 */
export function guardFeedback(reason: string): string {
  return [
    reason,
    'Nothing from that loop was committed. Put those files back as they were when the run started:',
    "the run's configuration (.chalk/), hooks, CI gate files and the spec's wording are not yours to change;",
    'in the spec, only tick the checkpoints you finished. A second such loop stops the run.',
  ].join('\n');
}

/** The detention kind a loop's ending maps to when retries run out. */
const KIND_OF: Record<Exclude<LoopEnding['ended'], 'progressed'>, DetentionKind> = {
  failed: 'failed',
  agent_error: 'agent_error',
  passed: 'passed',
};

/**
 * After a loop (and its verdict): progress clears the failure count, feedback
 * and findings; a loop without progress counts one failure, and more than
 * `CHALK_MAX_RETRIES` in a row detains the run with the loop's own reason. A
 * loop the guard refused also counts toward GUARDED_LOOPS_DETAIN per run, and
 * detains (as `guard`, naming the files) at whichever limit comes first; a loop
 * whose commits were refused on their way home detains at once (as `refused`).
 */
export function afterLoop(state: LoopState, limits: Limits, ending: LoopEnding): DetainRequest | null {
  if (ending.ended === 'progressed') {
    state.failures = 0;
    state.feedback = '';
    state.findings = '';
    return null;
  }
  state.failures += 1;
  // Commits refused on their way home (a bomb, a tag for a head, history rewritten) would be sent
  // the same way again: the run stops at once, and says what was refused.
  if (ending.refused) return { kind: 'refused', reason: ending.reason, detail: '' };
  if (ending.guarded) {
    state.guarded += 1;
    if (state.guarded < GUARDED_LOOPS_DETAIN && state.failures <= limits.maxRetries) return null;
    return { kind: 'guard', reason: ending.reason, detail: '', files: ending.guarded };
  }
  if (state.failures > limits.maxRetries) {
    return {
      kind: KIND_OF[ending.ended],
      reason: ending.reason,
      detail: '',
      ...(ending.ending ? { ending: ending.ending } : {}),
    };
  }
  return null;
}
