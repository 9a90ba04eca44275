/**
 * Spec mode's exact check (core/store/lessons.ts, specLessons), pure: the lessons whose anchors
 * reach their count (schema 10) come in with which of the spec's distinct trigrams each text has,
 * and out come the best `limit` by pg_trgm's word_similarity(text, spec) above 0.6, best first,
 * then newest. Each candidate is bounded before it is scored: c / n (c of its n trigrams in the
 * spec), then the best c / (n + N) over every extent of the spec (N: the extent's distinct trigrams
 * the text lacks), which bounds what pg_trgm's extent search (iterateWordSimilarity) can find; only a
 * lesson whose bound reaches the best `limit` found so far is scored, most promising first.
 */
import { iterateWordSimilarity } from './trigram.js';

/** Spec mode's rule: word_similarity(coalesce(first_error, signature), spec) above it. */
export const SPEC_ABOVE = 0.6;

/** Scores closer than this are treated as a possible tie (word_similarity is a float4). */
const TIE = 1e-6;

/**
 * How many anchors a text with n distinct trigrams has: schema.sql's chalk_spec_anchor_count
 * (0.6 n up to 150 trigrams, 0.5 n beyond, rounded up). The two must agree (recall-equivalence
 * test).
 */
export const anchorCount = (n: number): number => (n <= 150 ? Math.floor((3 * n + 4) / 5) : Math.floor((n + 1) / 2));

/**
 * Whether a lesson with n distinct trigrams, `hits` of its anchors in the spec, can score above
 * 0.6: it has at most hits + (n - anchors) of its trigrams in the spec, and it needs more than 0.6 n
 * (0.5994 n: a hair under, so that no float4 rounding loses one).
 */
export const anchorsReach = (hits: number, n: number): boolean =>
  n > 0 && hits * 10_000 + (n - anchorCount(n)) * 10_000 >= 5_994 * n;

/** One lesson to check: its id, its text's count of distinct trigrams, and which of the spec's it has. */
export interface SpecCandidate {
  id: number;
  n: number;
  /** Indexes into the spec's distinct trigrams (trigramSequence's `unique`), each once. */
  shared: number[];
}

export interface SpecScore {
  id: number;
  /** word_similarity(text, spec), as pg_trgm gives it (float4). */
  score: number;
}

/** Whether a text is all ASCII (core/store/trigram.ts makes Postgres's trigrams of it once the shape's probe agrees). */
export function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** A trigram of [ a-z0-9] as a number below CODES (space 0, digits 1-10, letters 11-36), or -1. */
const CODES = 37 * 37 * 37;
const charCode = (c: number): number =>
  c === 32 ? 0 : c >= 48 && c <= 57 ? c - 47 : c >= 97 && c <= 122 ? c - 86 : -1;
function codeOf(t: string): number {
  if (t.length !== 3) return -1;
  const a = charCode(t.charCodeAt(0));
  const b = charCode(t.charCodeAt(1));
  const c = charCode(t.charCodeAt(2));
  return a < 0 || b < 0 || c < 0 ? -1 : (a * 37 + b) * 37 + c;
}

/**
 * A spec's distinct trigrams, to read lessons' texts against: which of them a text has, and how
 * many distinct trigrams the text has, without making its trigrams one string at a time.
 */
export class SpecTrigrams {
  private readonly byCode = new Int32Array(CODES).fill(-1);
  private readonly byName: Map<string, number>;
  private readonly seen = new Uint32Array(CODES);
  private stamp = 0;

  constructor(unique: readonly string[]) {
    this.byName = new Map(unique.map((t, i) => [t, i]));
    unique.forEach((t, i) => {
      const code = codeOf(t);
      if (code >= 0) this.byCode[code] = i;
    });
  }

  /** An ASCII text's trigrams as trigramList makes them: words of letters and digits, lower case, two spaces before and one after. */
  ascii(text: string): { n: number; shared: number[] } {
    this.stamp += 1;
    if (this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const shared: number[] = [];
    let n = 0;
    const add = (code: number) => {
      if (this.seen[code] === stamp) return;
      this.seen[code] = stamp;
      n += 1;
      const i = this.byCode[code] as number;
      if (i >= 0) shared.push(i);
    };
    let a = 0; // the two characters before, as codes (space at a word's start)
    let b = 0;
    let inWord = false;
    for (let i = 0; i <= text.length; i++) {
      let c = i < text.length ? text.charCodeAt(i) : 32;
      if (c >= 65 && c <= 90) c += 32;
      const k = charCode(c);
      if (k > 0) {
        if (!inWord) {
          a = 0;
          b = 0;
          inWord = true;
        }
        add((a * 37 + b) * 37 + k);
        a = b;
        b = k;
      } else if (inWord) {
        add((a * 37 + b) * 37);
        inWord = false;
      }
    }
    return { n, shared };
  }

  /** A list of distinct trigrams (Postgres's show_trgm of a text). */
  of(trigrams: readonly string[]): { n: number; shared: number[] } {
    const shared: number[] = [];
    for (const t of trigrams) {
      const i = this.byName.get(t);
      if (i !== undefined) shared.push(i);
    }
    return { n: new Set(trigrams).size, shared };
  }
}

/**
 * Whether some extent of the spec (`seq`, indexes of its distinct trigrams in order) gives a text
 * with n trigrams, of which it has those marked in `found`, c / (n + N) of at least `bound`: c its
 * distinct trigrams the text has, N those it lacks. pg_trgm's extent search only ever scores an
 * extent so, so its answer is at most the best. The best extent starts where a run of found
 * trigrams starts (taking in a found trigram never lowers it), and no extent with N above
 * n (1 - bound) / bound reaches it, which ends each scan early.
 */
export function extentReaches(
  seq: Int32Array,
  found: Uint8Array,
  n: number,
  bound: number,
  mark: Int32Array,
  stamp: { value: number },
): boolean {
  for (let p = 0; p < seq.length; p++) {
    if (!found[seq[p] as number] || (p > 0 && found[seq[p - 1] as number])) continue;
    stamp.value += 1;
    const s = stamp.value;
    let c = 0;
    let lacks = 0;
    for (let q = p; q < seq.length; q++) {
      const u = seq[q] as number;
      if (mark[u] === s) continue;
      mark[u] = s;
      if (found[u]) {
        c += 1;
        if (c / (n + lacks) >= bound) return true;
      } else {
        lacks += 1;
        if (n / (n + lacks) < bound) break;
      }
    }
  }
  return false;
}

/**
 * The best `limit` candidates above 0.6 by word_similarity(text, spec), best first, then the newest
 * (highest id): candidates in order of c / n, each scored by pg_trgm's extent search only when its
 * bounds reach the `limit`-th score found so far (or 0.6), until none left can.
 */
export function rankSpec(
  seq: Int32Array,
  size: number,
  candidates: readonly SpecCandidate[],
  limit: number,
): SpecScore[] {
  if (limit <= 0) return [];
  const kept = candidates
    .filter((c) => c.n > 0 && c.shared.length * 10_000 >= 5_994 * c.n)
    .map((c) => ({ ...c, bound: c.shared.length / c.n }))
    .sort((a, b) => b.bound - a.bound || b.id - a.id);
  const found = new Uint8Array(size);
  const mark = new Int32Array(size);
  const stamp = { value: 0 };
  const top: SpecScore[] = [];
  for (const c of kept) {
    const floor = top.length >= limit ? (top[limit - 1] as SpecScore).score : SPEC_ABOVE;
    if (top.length >= limit && c.bound < floor - TIE) break;
    for (const i of c.shared) found[i] = 1;
    if (extentReaches(seq, found, c.n, Math.max(SPEC_ABOVE, floor) - TIE, mark, stamp)) {
      const score = iterateWordSimilarity(seq, found, c.n);
      if (score > SPEC_ABOVE) {
        top.push({ id: c.id, score });
        top.sort((a, b) => b.score - a.score || b.id - a.id);
        if (top.length > limit) top.length = limit;
      }
    }
    for (const i of c.shared) found[i] = 0;
  }
  return top;
}
