import type { RecalledLesson } from './store.js';

/** Which past lessons a loop is given (the recall ladder lives in core/memory), as the store's RecalledLesson. */
export interface LessonMemory {
  recall(query: {
    repo: string;
    fingerprint?: string;
    firstError?: string;
    failure: string;
  }): Promise<RecalledLesson[]>;
}
