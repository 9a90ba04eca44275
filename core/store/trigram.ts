/**
 * pg_trgm's similarity and word_similarity in JavaScript: the same trigrams (lower-cased words of
 * letters and digits, two spaces before and one after each) and the same formulas (DIVUNION:
 * shared / (a + b - shared), in float4), word similarity by pg_trgm's own extent search
 * (iterate_word_similarity). The MemoryStore recalls with them what Postgres does; spec-mode recall
 * (core/store/spec-rank.ts) scores its candidates with iterateWordSimilarity when this tokenisation
 * gives the spec and the texts exactly the trigrams Postgres gives them (ASCII, once the store's
 * shape has seen pg_trgm read a probe of every ASCII character the same; where Postgres's locale
 * reads other characters, the sets differ and Postgres scores).
 */

const WORD = /[\p{L}\p{N}]+/gu;

/** The trigrams of a text in order, with repeats (pg_trgm's generate_trgm_only). */
export function trigramList(text: string): string[] {
  const out: string[] = [];
  for (const [word] of text.matchAll(WORD)) {
    const chars = [' ', ' ', ...word.toLowerCase(), ' '];
    for (let i = 0; i + 3 <= chars.length; i++) out.push(chars.slice(i, i + 3).join(''));
  }
  return out;
}

/** The distinct trigrams of a text (pg_trgm's show_trgm, unordered). */
export const trigrams = (text: string): Set<string> => new Set(trigramList(text));

/** pg_trgm's CALCSML (DIVUNION), in float4 as trgm_op.c computes it. */
const calc = (count: number, len1: number, len2: number) => Math.fround(count / (len1 + len2 - count));

/** pg_trgm's similarity(a, b). */
export function similarity(a: string, b: string): number {
  const x = trigrams(a);
  const y = trigrams(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const t of x) if (y.has(t)) shared += 1;
  return calc(shared, x.size, y.size);
}

/** pg_trgm's word_similarity(needle, haystack): the needle against the best extent of the haystack. */
export function wordSimilarity(needle: string, haystack: string): number {
  const inNeedle = trigrams(needle);
  if (inNeedle.size === 0) return 0;
  const { seq, unique } = trigramSequence(haystack);
  if (seq.length === 0) return 0;
  return iterateWordSimilarity(
    seq,
    Uint8Array.from(unique, (t) => (inNeedle.has(t) ? 1 : 0)),
    inNeedle.size,
  );
}

/** A text's trigrams in order as indexes into its distinct trigrams (`unique`, in order of first appearance). */
export function trigramSequence(text: string): { seq: Int32Array; unique: string[] } {
  const list = trigramList(text);
  const ids = new Map<string, number>();
  const seq = new Int32Array(list.length);
  list.forEach((t, i) => {
    let id = ids.get(t);
    if (id === undefined) {
      id = ids.size;
      ids.set(t, id);
    }
    seq[i] = id;
  });
  return { seq, unique: [...ids.keys()] };
}

/**
 * pg_trgm's iterate_word_similarity (trgm_op.c), step for step and in float4: the haystack's
 * trigrams in order (`seq`, indexes of its distinct trigrams), which of those the needle has
 * (`found`), and the needle's count of distinct trigrams (`ulen1`). At each needle trigram the
 * extent ends there, and its start moves forward while that makes the similarity greater.
 */
export function iterateWordSimilarity(seq: Int32Array, found: Uint8Array, ulen1: number): number {
  const lastpos = new Int32Array(found.length).fill(-1);
  let ulen2 = 0;
  let count = 0;
  let upper = -1;
  let lower = -1;
  let max = 0;
  for (let i = 0; i < seq.length; i++) {
    const j = seq[i] as number;
    if (lower >= 0 || found[j]) {
      if ((lastpos[j] as number) < 0) {
        ulen2 += 1;
        if (found[j]) count += 1;
      }
      lastpos[j] = i;
    }
    if (!found[j]) continue;
    upper = i;
    if (lower === -1) {
      lower = i;
      ulen2 = 1;
    }
    let cur = calc(count, ulen1, ulen2);
    let tmpCount = count;
    let tmpUlen2 = ulen2;
    const prevLower = lower;
    for (let tl = lower; tl <= upper; tl++) {
      const s = calc(tmpCount, ulen1, tmpUlen2);
      if (s > cur) {
        cur = s;
        ulen2 = tmpUlen2;
        lower = tl;
        count = tmpCount;
      }
      const tj = seq[tl] as number;
      if (lastpos[tj] === tl) {
        tmpUlen2 -= 1;
        if (found[tj]) tmpCount -= 1;
      }
    }
    max = Math.max(max, cur);
    for (let tl = prevLower; tl < lower; tl++) {
      const tj = seq[tl] as number;
      if (lastpos[tj] === tl) lastpos[tj] = -1;
    }
  }
  return max;
}
