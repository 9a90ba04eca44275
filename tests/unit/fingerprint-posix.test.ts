import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { normaliseError } from '../../core/fingerprint/index.js';

/**
 * The normalisation rules are specified as POSIX extended regular expressions
 * (leftmost-longest matching); JavaScript's are leftmost-first. This compares
 * normaliseError with GNU sed running the same rules, in the C locale, over a
 * generated corpus of lines built from the pieces the rules care about.
 */
const RULES_AS_SED = [
  's/[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?/<time>/g',
  's/[0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?/<time>/g',
  's/0x[0-9a-fA-F]+/0x?/g',
  "s/(thread '[^']*') \\([0-9]+\\)/\\1/g",
  's#(/private)?/(tmp|var/tmp|var/folders)/[^[:space:]:"()]*#<tmp>#g',
  's/:[0-9]+(:[0-9]+)?//g',
  's/[0-9]+(\\.[0-9]+)? ?(ns|us|ms|s|m|h)([^[:alnum:]_]|$)/<d>\\3/g',
  's/[[:space:]]+/ /g',
  's/^ //',
  's/ $//',
];

const PIECES = [
  '2026-11-30',
  '2026-11-30T12:00',
  '2026-11-30 12:00:01',
  '2026-11-30T12:00:01.5Z',
  '2026-11-30T12:00:01,25+05:30',
  '2026-11-30T12:00-0800',
  '12:34:56',
  '12:34:56.789',
  '1:2:3',
  '0x7f3a2b',
  '0xZZ',
  '0xDEADbeef',
  "thread 'a::b' (23599) panicked at",
  "thread '",
  "'",
  '(123)',
  ' (7)',
  '/tmp/a/b.txt',
  '/tmp/',
  '/private/var/folders/x/T/y',
  '/var/tmp/q:3',
  '/tmp/x(y)',
  'a.py:12',
  'a.rs:8:22:',
  ':7',
  '12ms',
  '1.5 s',
  '3ns',
  '4us',
  '5m',
  '6h',
  '10mb',
  '2s_x',
  '7 m',
  '(0.00s)',
  '1.2.3s',
  '99s,',
  'x',
  'Error:',
  'AssertionError:',
  'FAIL',
  '--- FAIL: TestX',
  ' ',
  '  ',
  '\t',
  '"',
  '(',
  ')',
  ':',
  '-',
  '.',
  '12',
  '2026',
  'h',
  's',
  'ms',
];

/** A deterministic generator, so a failure can be reproduced. */
function* lines(count: number): Generator<string> {
  let seed = 42;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  for (let i = 0; i < count; i++) {
    const n = 1 + (next() % 7);
    let line = '';
    for (let j = 0; j < n; j++) {
      line += PIECES[next() % PIECES.length];
      if (next() % 3 === 0) line += ' ';
    }
    yield line;
  }
}

const hasSed = (() => {
  try {
    execFileSync('sed', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('normalisation agrees with POSIX ERE semantics', () => {
  it.skipIf(!hasSed && process.env.CI !== 'true')('on 3000 generated lines', () => {
    const corpus = [...lines(3000)];
    const args = RULES_AS_SED.flatMap((r) => ['-e', r]);
    const out = execFileSync('sed', ['-E', ...args], {
      input: `${corpus.join('\n')}\n`,
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
    }).split('\n');
    const mismatches = corpus
      .map((line, i) => ({ line, sed: out[i], ours: normaliseError(line) }))
      .filter((m) => m.sed !== m.ours);
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});
