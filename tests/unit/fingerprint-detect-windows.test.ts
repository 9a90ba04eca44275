import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanLog } from '../../core/fingerprint/log.js';
import {
  afterSpace,
  checkPatterns,
  firstChars,
  fromLineStart,
  type LineCheck,
  lineCrossings,
  mayStartWith,
} from '../../core/fingerprint/runners/detect.js';
import { RUNNERS } from '../../core/fingerprint/runners/index.js';

/**
 * What the window-by-window detection (runners/detect.ts, `Detector`) reads from a pattern's
 * source, each a promise the walk relies on: how many line breaks a match crosses (how far
 * past a window it reads), and which characters a match starts with (which line starts it
 * passes over). Anything unsure must come out as "not told" (Infinity, null: read the slow way).
 */
const PATTERNS = checkPatterns(RUNNERS.map((r) => r.detect as LineCheck));
const WALKED = PATTERNS.filter(fromLineStart);

const dir = join(import.meta.dirname, '..', 'fixtures', 'fingerprint');
const TEXTS = [...readdirSync(dir), ...readdirSync(join(dir, 'rerun')).map((f) => join('rerun', f))]
  .filter((f) => /\.(txt|tap|jsonl)$/.test(f))
  .map((f) => cleanLog(readFileSync(join(dir, f), 'utf8')));

describe('the line breaks a pattern crosses', () => {
  it('counts the whitespace runs that may hold a newline', () => {
    const cases: [RegExp, number][] = [
      [/^abc$/m, 0],
      [/^a\s+b/m, 1],
      [/^\s*x\s+y/m, 2],
      [/^[ \t\n]*x/m, 1],
      [/^[^ \t\n]+x/m, 0],
      [/^a\nb/m, 1],
      [/^(\s+a)?b/m, 1],
      [/^a\S+\d{2,}/m, 0],
      [/^(?:FAIL|ERROR): \S+ \(/m, 0],
    ];
    for (const [p, n] of cases) expect(lineCrossings(p), p.source).toBe(n);
  });

  it('does not tell what may cross any number of lines, or see past its match', () => {
    for (const p of [
      /^a[^x]b/m,
      /^a\Db/m,
      /^a\Wb/m,
      /^a.b/ms,
      /^(\s+a)+/m,
      /^(\s+a){2}/m,
      /^a(?=\s*b)/m,
      /^(?<!x)a/m,
      /^a\x41b/m, // an escape not told here
    ])
      expect(lineCrossings(p), p.source).toBe(Number.POSITIVE_INFINITY);
  });

  it('tells it for every runner pattern, so none is read the slow way', () => {
    for (const p of PATTERNS) expect(Number.isFinite(lineCrossings(p)), p.source).toBe(true);
    expect(Math.max(...WALKED.map(lineCrossings))).toBe(2);
  });
});

describe('the characters a match starts with', () => {
  it('reads literals, classes, groups and optional parts', () => {
    const starts = (p: RegExp, s: string) => mayStartWith(firstChars(p), s.charCodeAt(0));
    expect(starts(/^Ran [0-9]+/m, 'R')).toBe(true);
    expect(starts(/^Ran [0-9]+/m, 'r')).toBe(false);
    expect(starts(/^(FAIL|ERROR): /m, 'E')).toBe(true);
    expect(starts(/^(FAIL|ERROR): /m, 'X')).toBe(false);
    expect(starts(/^(not )?ok\b/m, 'o')).toBe(true);
    expect(starts(/^(not )?ok\b/m, 'n')).toBe(true);
    expect(starts(/^(not )?ok\b/m, 'k')).toBe(false);
    expect(starts(/^\s*● /m, '\n')).toBe(true);
    expect(starts(/^[0-9]+%/m, '7')).toBe(true);
    expect(starts(/^\[x\]/m, '[')).toBe(true);
    // What may match nothing, start with anything, or look around: any character.
    expect(['a', 'b', 'c'].map((x) => starts(/^(a|)b/m, x))).toEqual([true, true, false]);
    for (const p of [/^\s*$/m, /^.x/m, /^\Sx/m, /^[^a]x/m, /^(?=a)a/m, /^(a|b)?/m, /^a*b/im])
      expect(firstChars(p), p.source).toBeNull();
  });

  it('reads what follows a leading run of whitespace, only where that never starts with whitespace', () => {
    expect(mayStartWith(afterSpace(/^\s+\d+ passing/m), '5'.charCodeAt(0))).toBe(true);
    expect(mayStartWith(afterSpace(/^\s+\d+ passing/m), 'd'.charCodeAt(0))).toBe(false);
    expect(afterSpace(/^\s*\s?x/m)).toBeNull();
    expect(afterSpace(/^\s*(x|\ty)/m)).toBeNull();
    expect(afterSpace(/^a\s*x/m)).toBeNull();
    expect(afterSpace(/^\s*x?/m)).toBeNull();
  });

  it('never passes over a line start where a runner pattern matches, in every fixture', () => {
    let matched = 0;
    const extra = [
      '\n\n5 passing (3ms)',
      '  \n\t 12 failing',
      'x\n  Test Files\n\n  3 failed ',
      'Tests:\n\n 2 ',
      '\n\n--- FAIL: T',
    ];
    for (const text of [...TEXTS, ...extra]) {
      for (let at = 0; at < text.length; at = text.indexOf('\n', at) + 1 || text.length) {
        for (const p of WALKED) {
          const sticky = new RegExp(p.source, 'my');
          sticky.lastIndex = at;
          if (!sticky.test(text)) continue;
          matched++;
          const c = text.charCodeAt(at);
          expect(mayStartWith(firstChars(p), c), `${p.source} at ${JSON.stringify(text.slice(at, at + 30))}`).toBe(
            true,
          );
          const rest = afterSpace(p);
          if (rest === null || !/\s/.test(text[at] as string)) continue;
          const q = at + (/^\s*/.exec(text.slice(at))?.[0].length ?? 0);
          expect(mayStartWith(rest, text.charCodeAt(q)), `${p.source} after its spaces`).toBe(true);
        }
      }
    }
    expect(matched).toBeGreaterThan(100);
  });
});
