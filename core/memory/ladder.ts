import { RECALL_LIMIT, type RecallContext, type RecallKey } from '../ports/lesson-memory.js';
import type { RecalledLesson } from '../ports/store.js';

/**
 * One rung of the recall ladder. It gets the key and what the rungs before it found (best
 * first) and returns the list as it leaves it: it may add lessons, drop or reorder the ones it
 * was given. Whatever a rung returns, exact-fingerprint lessons stay first (`settle`), so a later
 * rung (issue 13's semantic recall and the decider's rerank) can never displace one.
 */
export interface LadderRung {
  readonly name: string;
  climb(key: RecallKey, found: readonly RecalledLesson[], context?: RecallContext): Promise<RecalledLesson[]>;
}

/** Each lesson once (its first place wins), exact-fingerprint lessons before every other, order otherwise kept. */
export function settle(found: readonly RecalledLesson[]): RecalledLesson[] {
  const seen = new Set<number>();
  const once: RecalledLesson[] = [];
  for (const l of found) {
    if (seen.has(l.id)) continue;
    seen.add(l.id);
    once.push(l);
  }
  return [...once.filter((l) => l.how === 'exact'), ...once.filter((l) => l.how !== 'exact')];
}

/** The ladder: every rung in order, the list settled after each; at most `limit` (RECALL_LIMIT) lessons. */
export async function climbLadder(
  rungs: readonly LadderRung[],
  key: RecallKey,
  opts: { limit?: number; context?: RecallContext } = {},
): Promise<RecalledLesson[]> {
  const limit = opts.limit ?? RECALL_LIMIT;
  let found: RecalledLesson[] = [];
  for (const rung of rungs) found = settle(await rung.climb(key, found, opts.context));
  return found.slice(0, limit);
}
