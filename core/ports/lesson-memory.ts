import type { HostBudget } from './decider.js';
import type { RecalledLesson } from './store.js';

/**
 * How a loop asks for lessons, computed by the loop (core/memory/key.ts):
 * - `failure`: after a failed loop with a fingerprint or a first error; `query` is the first
 *   error, a newline, then the failing tests one per line;
 * - `spec`: before any failure (and again after progress); `query` is the whole spec;
 * - `text`: otherwise (a loop that failed without a fingerprint); `query` is the retry feedback.
 */
export type RecallMode = 'failure' | 'spec' | 'text';
export const RECALL_MODES: readonly RecallMode[] = ['failure', 'spec', 'text'];

export interface RecallKey {
  /** The repository the loop runs in (scope `repo`, `none` and unscoped lessons are recalled only there). */
  repo: string;
  mode: RecallMode;
  /** At most RECALL_QUERY_MAX characters. */
  query: string;
  /** The failed loop's lesson fingerprint (failure mode), else null. */
  fingerprint: string | null;
  /** The failed loop's first error (failure mode), else null. */
  firstError: string | null;
}

/** Which loop asks, for the rungs that call a host service (semantic recall, the decider's rerank). */
export interface RecallContext {
  runId: string;
  ticket: string;
  loop: number;
  /**
   * The loop's one budget for the host services: the embedding and the rerank take their time
   * from it, as the stuck question does later in the same loop. Without it such rungs ask nothing.
   */
  budget?: HostBudget | undefined;
  /** The run's `io/decisions.jsonl`. */
  decisionsFile?: string | undefined;
}

/** The longest recall query: a longer one is cut to this many characters. */
export const RECALL_QUERY_MAX = 4_000;
/** The most lessons one loop's prompt is given. */
export const RECALL_LIMIT = 3;

/**
 * Which past lessons a loop is given. The default (core/memory, plugin `lesson-memory`) is the
 * recall ladder over the store; a plugin that binds Tokens.LessonMemory replaces it. Returns at
 * most RECALL_LIMIT lessons, best first, each with `how` set; resolved, not forgotten lessons
 * only, within the scope rule.
 */
export interface LessonMemory {
  recall(key: RecallKey, context?: RecallContext): Promise<RecalledLesson[]>;
}
