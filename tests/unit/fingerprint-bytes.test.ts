import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_LINE, GENERIC_ERRORS, normaliseError } from '../../core/fingerprint/first-error.js';
import { fingerprintFailure, sortTests, testsFromOutput } from '../../core/fingerprint/index.js';
import { LogWindows, WINDOW_BYTES } from '../../core/fingerprint/log.js';
import { type LogReading, readLog } from '../../core/fingerprint/read.js';
import { RUNNERS, type Runner } from '../../core/fingerprint/runners/index.js';
import { OUTPUT_PATTERNS } from '../../core/fingerprint/tests-from-output.js';

/**
 * The fingerprint reads a log of bytes a window at a time (core/fingerprint/log.ts, read.ts),
 * never as one string: whatever the windows, it gives what the plain way gives, reading the
 * whole log decoded and cleaned (below, written out as it was before the windows), on every
 * real runner log, on generated hostile logs (colour codes anywhere, carriage returns, NUL
 * bytes, invalid UTF-8, characters of several bytes, blank lines, huge lines) and on the edges
 * a window makes (a pattern reaching over blank lines into the next window, an error whose
 * values are in the next window, a runner found after its error line).
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
const clean = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/** What follows an introducing error line, as first-error.ts takes it. */
function continuation(after: readonly string[]): string {
  const header = /^\s*\+ actual - expected\s*$/;
  const near = after.slice(0, 3);
  const window = near.some((l) => header.test(l)) ? after.slice(0, 5) : near;
  const [first, second] = window.filter((l) => l.trim() !== '' && !header.test(l)).slice(0, 2);
  if (first === undefined) return '';
  if (/^\s*\+ /.test(first) && second !== undefined && /^\s*- /.test(second)) return `${first.trim()} ${second.trim()}`;
  return first;
}

/** The cleaned text's lines, not cleaned again (a trailing newline gives no empty line). */
function linesOf(c: string): string[] {
  const lines = c === '' ? [] : c.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The plain way: the whole text cleaned once, each runner's checks alone (its `failingTests`
 * cleaning what it is given once more, as it always has), E line by line.
 */
function plain(text: string, runners: readonly Runner[] = RUNNERS): LogReading {
  const c = clean(text);
  const detected = runners.filter((r) => r.detect(c));
  const lines = linesOf(c);
  const ids = detected.flatMap((r) => r.failingTests(c) ?? []);
  for (const line of lines)
    for (const { pattern } of OUTPUT_PATTERNS) {
      const m = pattern.exec(line);
      if (m?.[1] !== undefined) {
        ids.push(m[1]);
        break;
      }
    }
  const banners = [...GENERIC_ERRORS, ...runners.flatMap((r) => r.banner ?? [])];
  const specific = (line: string) => {
    const e = normaliseError(line);
    return e !== '' && !banners.some((re) => re.test(e)) ? e : null;
  };
  const asked = detected.length > 0 ? detected : runners;
  const firstError = (() => {
    for (const [i, line] of lines.entries()) {
      const runner = asked.find((r) => r.errorLine?.some((re) => re.test(line)));
      const e = runner ? specific(line) : null;
      if (runner === undefined || e === null) continue;
      if (!runner.errorContinues?.some((re) => re.test(line))) return e;
      return normaliseError(`${line} ${continuation(lines.slice(i + 1, i + 6))}`.trim());
    }
    let banner: string | null = null;
    for (const line of lines) {
      if (!ERROR_LINE.test(line)) continue;
      const e = specific(line);
      if (e !== null) return e;
      banner ??= normaliseError(line);
    }
    return banner ?? '';
  })();
  return { detected, ids, firstError };
}

const named = (r: LogReading) => ({ runners: r.detected.map((x) => x.name), ids: r.ids, firstError: r.firstError });

/** The windowed reading of the bytes, each window size, against the plain reading of them decoded. */
function expectSame(bytes: Buffer, sizes: readonly number[], what: string, runners?: readonly Runner[]): void {
  const want = named(plain(bytes.toString('utf8'), runners));
  for (const size of sizes)
    expect(named(readLog(LogWindows.of(bytes, size), runners)), `${what}, ${size}`).toEqual(want);
}

const dir = join(import.meta.dirname, '..', 'fixtures', 'fingerprint');
const FIXTURES = [...readdirSync(dir), ...readdirSync(join(dir, 'rerun')).map((f) => join('rerun', f))]
  .filter((f) => /\.(txt|tap|jsonl)$/.test(f))
  .map((f) => [f, readFileSync(join(dir, f))] as const);

/** A small deterministic generator (a test that cannot fail differently from one run to the next). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 0x100000000;
  };
}

/** Bytes a hostile rubric may print anywhere, a line's middle included. */
const HOSTILE: readonly Buffer[] = [
  '\u001b[31m',
  '\u001b[0m',
  '\u001b[1;32m',
  '\u001b[?25l',
  '\u001b[3',
  '\u001b',
  '\r',
  '\r\n',
  '\n',
  '\n\n\n',
  '   \n',
  '\t',
  '\u0000',
  'é',
  '●',
  '✘ ',
  '😀',
  '  5 passing (3ms)\n',
  'Tests:',
  '\n  Test Files  ',
].map((s) => Buffer.from(s));
const INVALID: readonly Buffer[] = [
  [0x80],
  [0xe2, 0x82],
  [0xff],
  [0xf0, 0x9f],
  [0xe2, 0x1b, 0x5b, 0x30, 0x6d, 0x82, 0xac],
].map((b) => Buffer.from(b));

/** A log made of real runner lines, with hostile bytes put in at random places. */
function hostileLog(seed: number): Buffer {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const parts: Buffer[] = [];
  for (let n = 0; n < 2 + Math.floor(next() * 3); n++) {
    const [, log] = pick(FIXTURES);
    const lines = log.toString('latin1').split('\n');
    const from = Math.floor(next() * lines.length);
    for (const line of lines.slice(from, from + 40)) {
      const bytes = Buffer.from(line, 'latin1');
      const cut = Math.floor(next() * (bytes.length + 1));
      const odd = next() < 0.3 ? [pick(next() < 0.7 ? HOSTILE : INVALID)] : [];
      parts.push(bytes.subarray(0, cut), ...odd, bytes.subarray(cut), Buffer.from('\n'));
    }
  }
  return Buffer.concat(parts);
}

describe('a log read as bytes, a window at a time', () => {
  it('reads every real runner log as the plain way does, whatever the windows', () => {
    expect(FIXTURES.length).toBeGreaterThan(60);
    for (const [name, log] of FIXTURES) expectSame(log, [1, 3, 17, 64, 1000, WINDOW_BYTES], name);
  });

  it('reads generated hostile logs as the plain way does', () => {
    for (let seed = 1; seed <= 80; seed++) expectSame(hostileLog(seed), [1, 7, 64, 500], `seed ${seed}`);
  });

  it('gives the fingerprint of the text the bytes are', () => {
    for (const [name, log] of FIXTURES) {
      const fromBytes = fingerprintFailure({ log, report: null, treeId: 'a'.repeat(40) });
      expect(fromBytes, name).toEqual(
        fingerprintFailure({ log: log.toString('utf8'), report: null, treeId: 'a'.repeat(40) }),
      );
    }
  });

  it('takes T as sortTests of the IDs the output names, repeats and surrogates included', () => {
    const logs: Buffer[] = [
      ...FIXTURES.map(([, log]) => log),
      ...Array.from({ length: 40 }, (_, i) => hostileLog(i + 1)),
    ];
    // Text (bytes cannot hold a lone surrogate): each ID twice, two whose lone surrogates have
    // the same UTF-8 (U+FFFD), and one above U+FFFF.
    const odd = ['tests/t.py::test_\ud800', 'tests/t.py::test_\udc00', 'tests/t.py::test_😀', 'tests/t.py::test_z'];
    const named = [...odd, ...odd.slice().reverse()].map((id) => `FAILED ${id} - x`).join('\n');
    for (const log of logs) {
      const ids = testsFromOutput(log.toString('utf8'));
      const fp = fingerprintFailure({ log, report: null, treeId: '' });
      expect(fp.tests).toEqual(ids.length > 0 ? sortTests(ids) : null);
    }
    const withSurrogates = `============ test session starts ============\n${named}\n`;
    const fp = fingerprintFailure({ log: withSurrogates, report: null, treeId: '' });
    expect(fp.tests).toEqual(sortTests(testsFromOutput(withSurrogates)));
    expect(fp.failing).toBe(4);
  });

  it('cuts windows only after a newline, and their cleaned text is the whole cleaned log', () => {
    for (const bytes of [hostileLog(7), Buffer.from('no newline at all'), Buffer.from('a\n'), Buffer.alloc(0)]) {
      for (const size of [1, 5, 100]) {
        const w = LogWindows.of(bytes, size);
        const texts = Array.from({ length: w.count }, (_, k) => w.at(k) as string);
        expect(texts.slice(0, -1).every((t) => t.endsWith('\n'))).toBe(true);
        expect(texts.join('')).toBe(clean(bytes.toString('utf8')));
        expect(w.text()).toBe(clean(bytes.toString('utf8')));
      }
    }
  });

  it('keeps a character of several bytes whole where a window would have cut it', () => {
    // Windows of 4 bytes would fall inside these characters; a window ends at a newline instead.
    const bytes = Buffer.from('●●●\n✘ [fail]: adds\n😀😀 FAILED tests/t.py::test_é\n1 test failed\n');
    expect(LogWindows.of(bytes, 4).text()).toBe(bytes.toString('utf8'));
    expectSame(bytes, [1, 2, 3, 4, 5], 'several bytes');
  });

  it('reads invalid UTF-8, NUL bytes and colour codes inside a character as decoding the whole log does', () => {
    const bytes = Buffer.concat([
      Buffer.from('============ test session starts ============\n'),
      Buffer.from([0xe2, 0x1b, 0x5b, 0x30, 0x6d, 0x82, 0xac, 0x0a]), // ESC[0m inside a 3-byte character
      Buffer.from('FAILED tests/t.py::test_a\u0000b - x\n'),
      Buffer.from([0x45, 0x20, 0x20, 0xff, 0xfe, 0x0a]), // E  <invalid>
      Buffer.from([0xe2, 0x82, 0x0a]), // a character cut by its line's end
      Buffer.from('FAILED tests/t.py::test_\u00e9 - y\r\n'),
      // A colour code that removing another makes: the runner's own cleaning removes it too.
      Buffer.from('FAILED tests/t.py::\u001b[1\u001b[3mtest_nested - z\n'),
    ]);
    expectSame(bytes, [1, 9, 64], 'invalid');
  });

  it('finds a pattern that reaches over blank lines into the next windows', () => {
    const cases = [
      'foo\n\n5 passing (3ms)\n', // mocha's \s+ from an empty line
      'x\n\n\n\n   \n\t12 failing\n',
      'a\n  Test Files\n\n\n   3 failed | 1 passed\n', // vitest: two runs of whitespace, each over lines
      'Tests:\n\n\n 2 failed, 3 total\n  ● a › b\n', // jest: both its patterns, the first over lines
      'ok 1 - a\n\n\n', // TAP's \s*$ at the log's end
    ];
    for (const log of cases) expectSame(Buffer.from(log), [1, 2, 3, 5, 8, 13, 1000], JSON.stringify(log));
  });

  it("joins an error to its values when they are in the next window, and finds a runner's error before the runner", () => {
    const node = Buffer.from(
      [
        '▶ math',
        '  ✖ multiplies (1ms)',
        '    AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
        '',
        '    6 !== 7',
        '',
        'ℹ tests 1',
        '',
      ].join('\n'),
    );
    expectSame(node, [1, 10, 40, 80], 'node --test');
    // pytest is found on the first line, go only at the end: go's error line, before pytest's, is E.
    const late = Buffer.from(
      [
        '============ test session starts ============',
        '    calc_test.go:8: Add(1, 2) = 3, want 4',
        ...Array.from({ length: 50 }, (_, i) => `tests/t.py::test_${i} PASSED`),
        'E       assert 1 == 2',
        'FAILED tests/t.py::test_x - assert 1 == 2',
        '--- FAIL: TestAdd (0.00s)',
        '',
      ].join('\n'),
    );
    expect(plain(late.toString()).firstError).toBe('calc_test.go: Add(1, 2) = 3, want 4');
    expectSame(late, [1, 30, 200, 5000], 'a runner found late');
  });

  it('asks every runner when none is found, and falls back to a line naming an error', () => {
    const none = Buffer.from('building\n    calc_test.go:8: Add(1, 2) = 3, want 4\nthread panicked\n');
    expectSame(none, [1, 10, 100], 'no runner');
    const keyword = Buffer.from('step 1\nFAIL\nsomething: error reading config\n');
    expect(plain(keyword.toString()).firstError).toBe('something: error reading config');
    expectSame(keyword, [1, 5, 100], 'keyword');
    expectSame(Buffer.from('all good\n'), [1, 4], 'nothing');
  });

  it('checks the slow way where another line terminator is', () => {
    for (const log of ['ok 1 - a\r\nnot ok 2 - b\r\n', 'a\u2028Test project /x\n', 'x\n\u2029FAILED t.py::x\n'])
      expectSame(Buffer.from(log), [1, 4, 100], JSON.stringify(log));
  });

  it('reads a line longer than a window, and a subset of the runners', () => {
    const huge = Buffer.from(
      `============ test session starts ============\n${'x'.repeat(300_000)} \u001b[31mFAILED\u001b[0m\nFAILED tests/t.py::test_long - ${'y'.repeat(200_000)}\nE   ${'z'.repeat(100_000)}\n`,
    );
    expectSame(huge, [1, 1000, WINDOW_BYTES], 'huge lines');
    expectSame(hostileLog(3), [1, 50], 'some runners', RUNNERS.slice(3, 9));
  });
});
