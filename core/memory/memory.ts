import {
  type LessonMemory,
  RECALL_LIMIT,
  RECALL_QUERY_MAX,
  type RecallContext,
  type RecallKey,
} from '../ports/lesson-memory.js';
import type { RecalledLesson } from '../ports/store.js';
import { climbLadder, type LadderRung } from './ladder.js';

/** The default LessonMemory: the recall ladder's rungs, climbed in order for every key. */
export class LadderMemory implements LessonMemory {
  constructor(readonly rungs: readonly LadderRung[]) {}

  recall(key: RecallKey, context?: RecallContext): Promise<RecalledLesson[]> {
    const query = key.query.slice(0, RECALL_QUERY_MAX);
    return climbLadder(this.rungs, { ...key, query }, { limit: RECALL_LIMIT, ...(context ? { context } : {}) });
  }
}
