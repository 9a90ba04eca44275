import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failedFingerprint } from '../../core/fingerprint/fingerprint.js';
import { cleanLog, failingTests, fingerprintFailure, firstError, sortTests } from '../../core/fingerprint/index.js';
import { eachLine, linesHolding, logLines } from '../../core/fingerprint/log.js';
import { anyLine, fromLineStart, type LineCheck } from '../../core/fingerprint/runners/detect.js';
import { detectRunners, RUNNERS } from '../../core/fingerprint/runners/index.js';
import { idsFromLines } from '../../core/fingerprint/runners/lines.js';
import { PYTEST_ID_WORDS, PYTEST_IDS } from '../../core/fingerprint/runners/python.js';
import { pytestLog } from '../../core/testing/pytest-log.js';

/**
 * The fingerprint reads a log once (cleaned, runners detected, lines walked without an array of
 * them): each shortcut gives what the way it replaces gives, on every real runner log in
 * tests/fixtures/fingerprint/, on a generated 50 MB pytest log and on the edge cases a shortcut
 * could get wrong.
 */
const dir = join(import.meta.dirname, '..', 'fixtures', 'fingerprint');
const FIXTURES = [...readdirSync(dir), ...readdirSync(join(dir, 'rerun')).map((f) => join('rerun', f))]
  .filter((f) => /\.(txt|tap|jsonl)$/.test(f))
  .map((f) => [f, readFileSync(join(dir, f), 'utf8')] as const);

/** The way before the one pass: each part cleans the log and detects its runners itself. */
const twoPasses = (log: string, report: string | null = null) =>
  failedFingerprint(failingTests(log, report), firstError(log), 'a'.repeat(40));
/** Each runner's check called on its own: every pattern run over the whole log. */
const oneByOne = (log: string) => RUNNERS.filter((r) => r.detect(log)).map((r) => r.name);
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
const REFERENCE_CLEAN = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

// The 50 MB log is made once: about a second.
const big = pytestLog(50);

describe('one pass over a log', () => {
  it('gives every real runner log the fingerprint the two passes gave', () => {
    expect(FIXTURES.length).toBeGreaterThan(60);
    for (const [name, log] of FIXTURES) {
      const fp = fingerprintFailure({ log, report: null, treeId: 'a'.repeat(40) });
      expect(fp, name).toEqual(twoPasses(log));
      expect(
        detectRunners(log).map((r) => r.name),
        name,
      ).toEqual(oneByOne(log));
      expect(
        detectRunners(cleanLog(log)).map((r) => r.name),
        name,
      ).toEqual(oneByOne(cleanLog(log)));
    }
  });

  it('gives the 50 MB pytest log the fingerprint the two passes gave', () => {
    const fp = fingerprintFailure({ log: big.text, report: null, treeId: 'a'.repeat(40) });
    expect(fp.failing).toBe(big.failing);
    expect(fp).toEqual(twoPasses(big.text));
    expect(detectRunners(cleanLog(big.text)).map((r) => r.name)).toEqual(oneByOne(cleanLog(big.text)));
  });

  it('uses the report for T and the log for E, as before', () => {
    const log = readFileSync(join(dir, 'pytest-color.out.txt'), 'utf8');
    const report = readFileSync(join(dir, 'pytest-junit.xml'), 'utf8');
    const fp = fingerprintFailure({ log, report, treeId: 'a'.repeat(40) });
    expect(fp.failing).toBeGreaterThan(0);
    expect(fp).toEqual(twoPasses(log, report));
  });
});

describe('the shortcuts, each against the way it replaces', () => {
  it('cleans as the two replacements did, returning a clean log as it is', () => {
    for (const text of [
      ...FIXTURES.map(([, log]) => log),
      'a\u001b[31mb\u001b[0m\r\nc',
      '\u001b[3\r1m kept: a carriage return inside is no sequence',
      '\u001b[?25l\u001b[2K\u001b[1;32mok\u001b[m\u001b',
      '\u001b]0;title\u0007 other escapes stay',
    ]) {
      expect(cleanLog(text)).toBe(REFERENCE_CLEAN(text));
    }
    const clean = 'no escape here\nnor a carriage return\n';
    expect(cleanLog(clean)).toBe(clean);
  });

  it('walks the lines logLines gives, from any line start', () => {
    for (const text of [
      ...FIXTURES.map(([, log]) => cleanLog(log)),
      '',
      '\n',
      'a',
      'a\n',
      'a\n\n',
      '\n\nb',
      'a\nb\n\n\n',
    ]) {
      expect([...eachLine(text)]).toEqual(logLines(text));
    }
    expect([...eachLine('a\nb\nc', 2)]).toEqual(['b', 'c']);
  });

  it('finds by search exactly the lines that hold a word', () => {
    const words = ['FAILED', 'ERROR', '●'];
    const cases = [
      ...FIXTURES.map(([, log]) => cleanLog(log)),
      'FAILED',
      'x\nERROR FAILED\n\nFAILED',
      'ERRORFAILED\nno',
    ];
    for (const text of cases) {
      const filtered = [...eachLine(text)].filter((l) => words.some((w) => l.includes(w)));
      expect([...linesHolding(text, words)]).toEqual(filtered);
    }
  });

  it("reads pytest's IDs from the lines holding its words as from every line", () => {
    for (const text of [...FIXTURES.map(([, log]) => cleanLog(log)), cleanLog(big.text)]) {
      expect(idsFromLines(text, PYTEST_IDS, PYTEST_ID_WORDS)).toEqual(idsFromLines(text, PYTEST_IDS));
    }
  });

  it('detects in one pass what each check finds alone, where a pattern spans lines or sits at either end', () => {
    const cases = [
      'Test project /x', // at the very start
      'log\nTest project /x', // on the last line, no newline after it
      'foo\n\n5 passing (3ms)', // mocha's \\s+ reaching over an empty line from the line before
      'x\n   \n\t12 failing', // over a line of blanks
      'Tests: 1 failed\n  ● a › b', // jest needs both of its patterns
      'Tests: 1 failed\n', // only one of them
      'ok 1 - a\r\nnot ok 2 - b\r\n', // another line terminator: checked the slow way
      'a\u2028Test project /x', // likewise
      '[INFO] x <<< FAILURE!\nTests run: 1', // a pattern not from a line start
      '',
    ];
    for (const log of cases)
      expect(
        detectRunners(log).map((r) => r.name),
        JSON.stringify(log),
      ).toEqual(oneByOne(log));
    // A subset of runners, in their order.
    const some = RUNNERS.slice(3, 9);
    const log = FIXTURES.map(([, l]) => cleanLog(l)).join('\n');
    expect(detectRunners(log, some)).toEqual(some.filter((r) => r.detect(log)));
  });

  it('looks for every pattern but one together; that one is run over the whole log', () => {
    const patterns = (c: LineCheck): RegExp[] =>
      'any' in c.tree ? [...c.tree.any] : c.tree.all.flatMap((x) => patterns(x));
    const apart = RUNNERS.flatMap((r) => patterns(r.detect as LineCheck)).filter((p) => !fromLineStart(p));
    expect(apart.map((p) => p.source)).toEqual(['<<< (FAILURE|ERROR)!$']);
    // What keeps a pattern apart: no `^` first, a `|` outside a group, another flag, a back reference.
    expect([/^a|b/m, /a/m, /^a/, /^a/im, /^(a)\1/m, /^(?<x>a)/m].map(fromLineStart)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect([/^(a|b)/m, /^[|]/m, /^\|/m, /^(?<=x)a/m].map(fromLineStart)).toEqual([true, true, true, true]);
    // A check made of patterns is also a plain function.
    expect(anyLine(/^x$/m)('a\nx\n')).toBe(true);
  });

  it('sorts in byte order with and without characters above U+FFFF', () => {
    const ids = ['b', 'a', 'é', 'z', '\u{1F600}', '\uFFFD', '\uE000', 'a b', 'A', 'a'];
    const bytes = (xs: string[]) =>
      [...new Set(xs)].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
    expect(sortTests(ids)).toEqual(bytes(ids));
    // Without a surrogate the order is JavaScript's own; U+E000 sorts below U+1F600 in bytes, above it in UTF-16.
    const plain = ids.filter((i) => i !== '\u{1F600}');
    expect(sortTests(plain)).toEqual(bytes(plain));
    expect(sortTests(['\uE000', '\u{1F600}'])).toEqual(['\uE000', '\u{1F600}']);
  });
});
