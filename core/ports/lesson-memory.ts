/** Which past lessons a loop is given (the recall ladder lives in core/memory). */
export interface RecalledLesson {
  id: number;
  text: string;
  how: 'exact' | 'lexical' | 'semantic' | 'rerank';
}

export interface LessonMemory {
  recall(query: {
    repo: string;
    fingerprint?: string;
    firstError?: string;
    failure: string;
  }): Promise<RecalledLesson[]>;
}
