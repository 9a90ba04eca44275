import { describe, expect, it } from 'vitest';
import {
  anchorCount,
  anchorsReach,
  extentReaches,
  isAscii,
  rankSpec,
  type SpecCandidate,
  SpecTrigrams,
} from '../../core/store/spec-rank.js';
import { iterateWordSimilarity, trigramSequence, trigrams } from '../../core/store/trigram.js';

/** mulberry32: the same cases every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'redis',
  'cache',
  'down',
  'Error',
  'pool',
  'timeout',
  'key',
  'ab',
  'a',
  'x1',
  'null',
  'READ',
  'write',
  '6379',
];

/** The best c / (n + N) over every extent of the spec, by trying them all. */
function bestExtent(seq: Int32Array, found: Uint8Array, n: number): number {
  let best = 0;
  for (let p = 0; p < seq.length; p++) {
    const seen = new Set<number>();
    let c = 0;
    let lacks = 0;
    for (let q = p; q < seq.length; q++) {
      const u = seq[q] as number;
      if (!seen.has(u)) {
        seen.add(u);
        if (found[u]) c += 1;
        else lacks += 1;
      }
      best = Math.max(best, c / (n + lacks));
    }
  }
  return best;
}

describe('spec-mode ranking (core/store/spec-rank.ts)', () => {
  it("reads an ASCII text's distinct trigrams as trigramList does, and which of the spec's it has", () => {
    const rnd = random(5);
    const chars = Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1));
    const spec = 'The cache is DOWN: redis refused 6379, retry_after=5s; x1 ab-a';
    const { unique } = trigramSequence(spec);
    const index = new SpecTrigrams(unique);
    for (let i = 0; i < 500; i++) {
      const text = Array.from({ length: Math.floor(rnd() * 60) }, () =>
        rnd() < 0.6 ? (WORDS[Math.floor(rnd() * WORDS.length)] as string) : (chars[Math.floor(rnd() * 127)] as string),
      ).join(rnd() < 0.5 ? ' ' : '');
      expect(isAscii(text)).toBe(true);
      const want = trigrams(text);
      const got = index.ascii(text);
      expect(got.n, JSON.stringify(text)).toBe(want.size);
      expect(got.shared.map((k) => unique[k]).sort()).toEqual(unique.filter((t) => want.has(t)).sort());
      // Postgres's list of the same trigrams reads the same.
      expect(index.of([...want])).toEqual({ n: want.size, shared: expect.arrayContaining(got.shared) });
    }
    expect(isAscii('café')).toBe(false);
  });

  it("bounds pg_trgm's extent search by the best extent, and says exactly whether that reaches a bound", () => {
    const rnd = random(11);
    const mark = new Int32Array(64);
    const stamp = { value: 0 };
    let reached = 0;
    for (let i = 0; i < 400; i++) {
      const size = 2 + Math.floor(rnd() * 40);
      const seq = Int32Array.from({ length: 1 + Math.floor(rnd() * 80) }, () => Math.floor(rnd() * size));
      const found = Uint8Array.from({ length: size }, () => (rnd() < 0.4 ? 1 : 0));
      const has = found.reduce((s, f) => s + f, 0);
      const n = has + Math.floor(rnd() * 6);
      if (n === 0) continue;
      const greedy = iterateWordSimilarity(seq, found, n);
      const best = bestExtent(seq, found, n);
      expect(greedy).toBeLessThanOrEqual(Math.fround(best));
      for (const bound of [0.2, 0.4, 0.6, 0.8, greedy - 1e-6, best]) {
        if (bound <= 0) continue;
        const reaches = extentReaches(seq, found, n, bound, mark, stamp);
        expect(reaches, `${bound} ${best}`).toBe(best >= bound);
        if (reaches) reached += 1;
      }
    }
    expect(reached).toBeGreaterThan(100);
  });

  it('ranks the best above 0.6 as scoring every candidate would, ties newest first', () => {
    const rnd = random(23);
    let found = 0;
    let ties = 0;
    for (let i = 0; i < 150; i++) {
      const words = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
      const spec = `# T-${i}\nWhen ${words(3)} then ${words(6)}.\n- [ ] ${words(4)}`;
      const { seq, unique } = trigramSequence(spec);
      const index = new SpecTrigrams(unique);
      const candidates: SpecCandidate[] = Array.from({ length: 40 }, (_, id) => ({
        id: id + 1,
        ...index.ascii(words(1 + Math.floor(rnd() * 4))),
      }));
      const limit = 1 + (i % 5);
      const all = candidates
        .map((c) => {
          const has = new Uint8Array(unique.length);
          for (const k of c.shared) has[k] = 1;
          return { id: c.id, score: c.n === 0 ? 0 : iterateWordSimilarity(seq, has, c.n) };
        })
        .filter((s) => s.score > 0.6)
        .sort((a, b) => b.score - a.score || b.id - a.id);
      const want = all.slice(0, limit);
      expect(rankSpec(seq, unique.length, candidates, limit)).toEqual(want);
      found += want.length;
      ties += want.filter((w, k) => k > 0 && w.score === want[k - 1]?.score).length;
    }
    expect(found).toBeGreaterThan(100);
    expect(ties).toBeGreaterThan(20);
  });

  it('anchors: 0.6 of a text up to 150 trigrams and 0.5 beyond, rounded up; a lesson reaches only with enough of them', () => {
    expect([0, 1, 2, 5, 10, 149, 150, 151, 152, 1000].map(anchorCount)).toEqual([0, 1, 2, 3, 6, 90, 90, 76, 76, 500]);
    // 10 trigrams, 6 anchors: 4 others, so at least 2 anchors in the spec for 0.5994 of them.
    expect(anchorsReach(1, 10)).toBe(false);
    expect(anchorsReach(2, 10)).toBe(true);
    expect(anchorsReach(0, 0)).toBe(false);
    // 1000 trigrams, 500 anchors: 500 others, so 100 anchors for 600 (0.5994 n rounds it to 599.4).
    expect(anchorsReach(99, 1000)).toBe(false);
    expect(anchorsReach(100, 1000)).toBe(true);
  });
});
