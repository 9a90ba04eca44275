import type { Answer, ChoiceAnswer, DecisionResponse, ScoreAnswer } from '../protocol/codec.js';
import type { DecisionFailure } from '../protocol/failure.js';
import type { DecisionRequest, QuestionType } from '../protocol/questions.js';

/**
 * How Chalk reads an answer:
 * - noul: `yes` when p >= 0.5, else `no`, with confidence max(p, 1 - p);
 * - choice and score: the value with the confidence the decider gave;
 * - a key that is missing, or an answer whose confidence is below the caller's
 *   threshold, is `unknown` (it never changes a run).
 */
export type NoulReading =
  | { answer: 'yes' | 'no'; confidence: number; p: number }
  | { answer: 'unknown'; confidence: number | null; p: number | null };
export type ChoiceReading =
  | { answer: string; known: true; confidence: number; probabilities?: Record<string, number> }
  | { answer: null; known: false; confidence: number | null; probabilities?: Record<string, number> };
export type ScoreReading =
  | { answer: number; known: true; confidence: number }
  | { answer: null; known: false; confidence: number | null };

export class DecisionReadError extends Error {
  override name = 'DecisionReadError';
}

export function readNoul(a: Answer | undefined, threshold = 0): NoulReading {
  if (a?.type !== 'noul') return { answer: 'unknown', confidence: null, p: null };
  const confidence = Math.max(a.noul, 1 - a.noul);
  if (confidence < threshold) return { answer: 'unknown', confidence, p: a.noul };
  return { answer: a.noul >= 0.5 ? 'yes' : 'no', confidence, p: a.noul };
}

export function readChoice(a: Answer | undefined, threshold = 0): ChoiceReading {
  if (a?.type !== 'choice') return { answer: null, known: false, confidence: null };
  const c = a as ChoiceAnswer;
  const probabilities = c.probabilities ? { probabilities: c.probabilities } : {};
  if (c.confidence < threshold) return { answer: null, known: false, confidence: c.confidence, ...probabilities };
  return { answer: c.choice, known: true, confidence: c.confidence, ...probabilities };
}

export function readScore(a: Answer | undefined, threshold = 0): ScoreReading {
  if (a?.type !== 'score') return { answer: null, known: false, confidence: null };
  const s = a as ScoreAnswer;
  if (s.confidence < threshold) return { answer: null, known: false, confidence: s.confidence };
  return { answer: s.score, known: true, confidence: s.confidence };
}

/**
 * One decision call's outcome: the request, and either the response or the
 * failure. Readers refuse, by name, an id that was not asked or was asked as
 * another type; reading a failed call says it answered nothing, and why.
 */
export class Decision {
  constructor(
    readonly request: DecisionRequest,
    readonly response: DecisionResponse | null,
    readonly failure: DecisionFailure | null,
    /** Wall time of the whole call, admission and retries included. */
    readonly latencyMs: number,
  ) {}

  get ok(): boolean {
    return this.response !== null;
  }

  get model(): string | null {
    return this.response?.model ?? null;
  }

  private answer(id: string, as: QuestionType): Answer | undefined {
    const q = this.request.questions[id];
    if (!q || !Object.hasOwn(this.request.questions, id)) {
      throw new DecisionReadError(
        `No question was asked under '${id}'; asked: [${Object.keys(this.request.questions).join(', ')}]`,
      );
    }
    if (q.type !== as) throw new DecisionReadError(`'${id}' was asked as a ${q.type}, read it as that`);
    if (!this.response) {
      throw new DecisionReadError(`the call answered nothing${this.failure ? `: ${this.failure.describe()}` : ''}`);
    }
    return this.response.answers[id];
  }

  noul(id: string, threshold = 0): NoulReading {
    return readNoul(this.answer(id, 'noul'), threshold);
  }

  choice(id: string, threshold = 0): ChoiceReading {
    return readChoice(this.answer(id, 'choice'), threshold);
  }

  score(id: string, threshold = 0): ScoreReading {
    return readScore(this.answer(id, 'score'), threshold);
  }

  /** The raw answer under an id (undefined when unknown), checked like the readers. */
  raw(id: string): Answer | undefined {
    const q = this.request.questions[id];
    if (!q) return this.answer(id, 'noul');
    return this.answer(id, q.type);
  }
}
