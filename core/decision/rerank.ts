import type { Answer } from '../protocol/codec.js';
import { type DecisionRequest, decisionRequest, type NoulQuestion, noul } from '../protocol/questions.js';
import { readNoul } from './reading.js';

/**
 * The lesson rerank (seed 000, "The questions Chalk asks"; original Chalk section 5.4 step 3):
 * pure rules for which recalled lessons are sent, the one request that asks about all of them,
 * and what its answers leave. The ladder's rerank rung (core/memory) does the I/O.
 */

/** The most lessons one rerank request asks about. */
export const RERANK_MAX = 5;
/** The longest request: its state and every question's instructions together, in characters. */
export const RERANK_REQUEST_MAX = 4_000;
/** The longest part of the state the current failure may take. */
export const RERANK_FAILURE_MAX = 1_500;

/** The question id of one lesson (its `decisions` row's lesson_id is read back from it). */
export const rerankId = (lessonId: number) => `lesson_${lessonId}`;

/** What a candidate needs: its id, how it was found, and the failure and fix it records. */
export interface RerankLesson {
  id: number;
  how?: string | undefined;
  signature: string;
  firstError: string | null;
  lesson: string | null;
  resolution: string | null;
}

/**
 * Which lessons the decider is asked about: the exact-fingerprint ones are kept whatever it says
 * and never sent; the others, lexical first, then semantic (then any other), each once, at most
 * RERANK_MAX.
 */
export function rerankCandidates<L extends RerankLesson>(found: readonly L[]): { exact: L[]; sent: L[] } {
  const exact: L[] = [];
  const seen = new Set<number>();
  for (const l of found) {
    if (l.how === 'exact' && !seen.has(l.id)) {
      seen.add(l.id);
      exact.push(l);
    }
  }
  const rank = (l: L) => (l.how === 'lexical' ? 0 : l.how === 'semantic' ? 1 : 2);
  const rest = found
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.how !== 'exact')
    .sort((a, b) => rank(a.l) - rank(b.l) || a.i - b.i);
  const sent: L[] = [];
  for (const { l } of rest) {
    if (seen.has(l.id) || sent.length >= RERANK_MAX) continue;
    seen.add(l.id);
    sent.push(l);
  }
  return { exact, sent };
}

const flat = (s: string) => s.replace(/\s+/g, ' ').trim();
const cut = (s: string, max: number) => {
  if (max <= 0) return '';
  if (s.length <= max) return s;
  return max <= 3 ? s.slice(0, max) : `${s.slice(0, max - 3)}...`;
};

const question = (lessonId: number): NoulQuestion =>
  noul(`Does lesson ${lessonId} apply to the current failure, so that its fix would help here?`);

/** A request's size as RERANK_REQUEST_MAX counts it: the state and every question's instructions. */
export function rerankRequestChars(r: DecisionRequest): number {
  return r.state.length + Object.values(r.questions).reduce((n, q) => n + q.instructions.length, 0);
}

/**
 * The rerank request: the current failure (at most RERANK_FAILURE_MAX characters), then each
 * lesson's failure (its first error, else its signature) and fix (its rule, else the person's
 * note), the characters left shared equally among them; one `noul` per lesson, `lesson_<id>`.
 * At most RERANK_REQUEST_MAX characters in all. Null when there is nothing to ask.
 */
export function rerankRequest(o: { failure: string; lessons: readonly RerankLesson[] }): DecisionRequest | null {
  const lessons = o.lessons.slice(0, RERANK_MAX);
  if (lessons.length === 0) return null;
  const head = `current failure:\n${cut(flat(o.failure), RERANK_FAILURE_MAX) || 'unknown'}\n`;
  const label = (l: RerankLesson) => `\nlesson ${l.id}:\n  failure: `;
  const fixLabel = '\n  fix: ';
  const questions: Record<string, NoulQuestion> = {};
  for (const l of lessons) questions[rerankId(l.id)] = question(l.id);
  const fixed =
    head.length +
    lessons.reduce((n, l) => n + label(l).length + fixLabel.length, 0) +
    Object.values(questions).reduce((n, q) => n + q.instructions.length, 0);
  const each = Math.max(0, Math.floor((RERANK_REQUEST_MAX - fixed) / (2 * lessons.length)));
  const body = lessons
    .map((l) => {
      const failure = cut(flat(l.firstError ?? l.signature), each) || 'unknown';
      const fix = cut(flat(l.lesson ?? l.resolution ?? ''), each) || 'none recorded';
      return `${label(l)}${failure}${fixLabel}${fix}`;
    })
    .join('');
  return decisionRequest(`${head}${body}`, questions);
}

/**
 * What the decider's answers leave: the exact lessons first, then each sent lesson it answered
 * yes at or above the threshold, most confident first (ties in the order sent), marked `rerank`.
 * Null when nothing readable came back (no answer: the plain ladder stands).
 */
export function applyRerank<L extends RerankLesson>(o: {
  exact: readonly L[];
  sent: readonly L[];
  answers: Record<string, Answer> | null;
  threshold: number;
}): Array<L & { how: 'rerank' | 'exact' }> | null {
  if (!o.answers) return null;
  const answers = o.answers;
  const read = o.sent.map((l, i) => ({ l, i, r: readNoul(answers[rerankId(l.id)], o.threshold) }));
  if (o.sent.length > 0 && read.every((x) => x.r.confidence === null)) return null;
  const kept = read
    .filter((x) => x.r.answer === 'yes')
    .sort((a, b) => (b.r.confidence ?? 0) - (a.r.confidence ?? 0) || a.i - b.i)
    .map((x) => ({ ...x.l, how: 'rerank' as const }));
  return [...o.exact.map((l) => ({ ...l, how: 'exact' as const })), ...kept];
}
