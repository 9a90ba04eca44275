/**
 * pg_trgm's similarity and word_similarity in JavaScript, for the MemoryStore: the same
 * trigrams (lower-cased words of letters and digits, two spaces before and one after each)
 * and the same formulas (DIVUNION: shared / (a + b - shared)), word similarity by pg_trgm's own
 * extent search (iterate_word_similarity), so the in-memory store recalls what Postgres does.
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

const calc = (count: number, len1: number, len2: number) => count / (len1 + len2 - count);

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
  const t1 = trigramList(needle);
  const t2 = trigramList(haystack);
  if (t1.length === 0 || t2.length === 0) return 0;
  const ids = new Map<string, number>();
  const id = (t: string) => {
    let v = ids.get(t);
    if (v === undefined) {
      v = ids.size;
      ids.set(t, v);
    }
    return v;
  };
  const inNeedle = new Set(t1.map(id));
  const index = t2.map(id);
  const found = (j: number) => inNeedle.has(j);
  const ulen1 = inNeedle.size;
  const lastpos = new Map<number, number>();
  const last = (j: number) => lastpos.get(j) ?? -1;
  let ulen2 = 0;
  let count = 0;
  let upper = -1;
  let lower = -1;
  let max = 0;
  for (let i = 0; i < index.length; i++) {
    const j = index[i] as number;
    if (lower >= 0 || found(j)) {
      if (last(j) < 0) {
        ulen2 += 1;
        if (found(j)) count += 1;
      }
      lastpos.set(j, i);
    }
    if (!found(j)) continue;
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
      const tj = index[tl] as number;
      if (last(tj) === tl) {
        tmpUlen2 -= 1;
        if (found(tj)) tmpCount -= 1;
      }
    }
    max = Math.max(max, cur);
    for (let tl = prevLower; tl < lower; tl++) {
      const tj = index[tl] as number;
      if (last(tj) === tl) lastpos.set(tj, -1);
    }
  }
  return max;
}
