import type { Fingerprint } from './fingerprint.js';
import { isSpecificError } from './first-error.js';

/**
 * Verdicts: what a loop without progress looks like next to the baseline,
 * the latest loop of the current non-progress streak that has a fingerprint.
 */
export const VERDICTS = [
  'first',
  'deja_vu',
  'repeat',
  'no_change',
  'improving',
  'spinning',
  'other',
  'blocked',
  'agent_error',
] as const;
export type Verdict = (typeof VERDICTS)[number];

/** How a loop ended. `progressed` loops get no verdict. */
export type LoopEnd = 'progressed' | 'failed' | 'passed' | 'blocked' | 'agent_error';

/** The verdicts that detain a run at once under `CHALK_FP_RULES=on`: the one list of them. */
export const STOPPING_VERDICTS = ['deja_vu', 'repeat', 'no_change'] as const satisfies readonly Verdict[];
export type StoppingVerdict = (typeof STOPPING_VERDICTS)[number];

export function isStopping(verdict: Verdict | null): verdict is StoppingVerdict {
  return verdict !== null && (STOPPING_VERDICTS as readonly Verdict[]).includes(verdict);
}

export interface VerdictInput {
  ended: Exclude<LoopEnd, 'progressed'>;
  /** The streak's baseline; null when there is none yet. */
  baseline: Fingerprint | null;
  /** This loop's fingerprint; null when none was taken (the agent did not finish). */
  current: Fingerprint | null;
  /** True when an open detention of another ticket in this repository has this loop's fingerprint. */
  openMatch?: boolean;
}

/**
 * The verdict of one loop without progress.
 * - `blocked` and `agent_error` loops are named for how they ended.
 * - A green loop that ticked nothing (`passed`) is judged on D only:
 *   `first` without a baseline, `no_change` for the same tree, else `other`.
 * - A failed loop: the first rule that matches wins:
 *   1. `deja_vu`    T known and it fails like another ticket's open detention (needs no baseline);
 *   2. `first`      no baseline;
 *   3. `repeat`     same tree, and the same known T (or T UNKNOWN on both and the same specific E);
 *   4. `no_change`  same tree;
 *   5. `improving`  T known on both, fewer tests failing now;
 *   6. `spinning`   the same known T, or T UNKNOWN on both and the same specific E;
 *   7. `other`.
 */
export function verdictFor({ ended, baseline, current, openMatch = false }: VerdictInput): Verdict {
  if (ended === 'blocked' || ended === 'agent_error') return ended;
  const cur = current;
  const sameTree = !!cur && cur.treeId !== '' && cur.treeId === (baseline?.treeId ?? '');
  if (ended === 'passed') {
    if (!baseline) return 'first';
    return sameTree ? 'no_change' : 'other';
  }
  const knownCur = !!cur && cur.tests !== null;
  const knownPrev = !!baseline && baseline.tests !== null;
  const sameTests = knownCur && knownPrev && sameList(cur.tests!, baseline.tests!);
  const sameError =
    !knownCur &&
    !knownPrev &&
    !!cur &&
    isSpecificError(cur.firstError) &&
    cur.firstError === (baseline?.firstError ?? '');

  if (knownCur && openMatch) return 'deja_vu';
  if (!baseline) return 'first';
  if (sameTree && (sameTests || sameError)) return 'repeat';
  if (sameTree) return 'no_change';
  if (knownCur && knownPrev && (cur.failing ?? 0) < (baseline.failing ?? 0)) return 'improving';
  if (sameTests || sameError) return 'spinning';
  return 'other';
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
