import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanLog, failingTests, fingerprintFailure, firstError, reportFormat } from '../../core/fingerprint/index.js';
import { AVA, JEST, MOCHA, NODE_TAP, NODE_TEST, TAP_STREAM, VITEST } from '../../core/fingerprint/runners/js.js';
import { looksLikeTap, tapFailingTests } from '../../core/fingerprint/tap.js';

/**
 * The real outputs of the JavaScript runners (scripts/fixtures/fingerprint-js.sh):
 * every suite is `math` with `adds` passing, `multiplies` failing on the
 * runner's equality assertion and `reads config` throwing an Error that names
 * a temporary path and a time.
 */
const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'fingerprint', name), 'utf8');

/** The temporary directory the script ran the suite in, as the fixture names it. */
const TEMP_DIR = /\/tmp\/chalk-fp-js\.[A-Za-z0-9]+/g;
const tempDirOf = (text: string) => text.match(TEMP_DIR)?.[0] ?? '';

/**
 * The same run on another machine at another time: another temporary
 * directory, every ISO time and clock time an hour on, and every duration
 * other digits.
 */
function elsewhere(text: string): string {
  return text
    .replace(TEMP_DIR, '/tmp/chalk-fp-js.Elsewhere9')
    .replace(/(\d{4}-\d{2}-\d{2}T)(\d{2})/g, (_m, day: string, hour: string) =>
      `${day}${(Number(hour) + 1) % 24}`.padEnd(day.length + 2, '0'),
    )
    .replace(/\b(\d{2}):(\d{2}):(\d{2})\b/g, '23:$2:$3')
    .replace(/\b\d+(\.\d+)?(ms|s)\b/g, (_m, frac: string | undefined, unit: string) => `98${frac ?? ''}${unit}`);
}

/** node:assert's message, with the values it puts on the next line. */
const NODE_ASSERT = 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 6 !== 7';

describe('failing tests and the first error, per real fixture', () => {
  it.each([
    ['mocha-spec.txt', ['math multiplies', 'math reads config'], NODE_ASSERT],
    ['mocha-spec-color.txt', ['math multiplies', 'math reads config'], NODE_ASSERT],
    ['mocha-dot.txt', ['math multiplies', 'math reads config'], NODE_ASSERT],
    ['mocha-tap.txt', ['math multiplies', 'math reads config'], NODE_ASSERT],
    [
      'jest-default.txt',
      ['math › multiplies', 'math › reads config'],
      'expect(received).toBe(expected) // Object.is equality',
    ],
    [
      'jest-default-color.txt',
      ['math › multiplies', 'math › reads config'],
      'expect(received).toBe(expected) // Object.is equality',
    ],
    [
      'vitest-default.txt',
      ['math.test.mjs > math > multiplies', 'math.test.mjs > math > reads config'],
      'AssertionError: expected 6 to be 7 // Object.is equality',
    ],
    [
      'vitest-default-color.txt',
      ['math.test.mjs > math > multiplies', 'math.test.mjs > math > reads config'],
      'AssertionError: expected 6 to be 7 // Object.is equality',
    ],
    [
      'vitest-verbose.txt',
      ['math.test.mjs > math > multiplies', 'math.test.mjs > math > reads config'],
      'AssertionError: expected 6 to be 7 // Object.is equality',
    ],
    ['node-spec.txt', ['math > multiplies', 'math > reads config'], NODE_ASSERT],
    ['node-spec-color.txt', ['math > multiplies', 'math > reads config'], NODE_ASSERT],
    // node's TAP puts the assertion's message in YAML (`error: |-`); the one-line `error:` is the next failure's.
    ['node-tap.txt', ['math > multiplies', 'math > reads config'], "error: 'cannot read <tmp> at <time>'"],
    ['ava-default.txt', ['math › multiplies', 'math › reads config'], 'Difference (- actual, + expected): - 6'],
    ['ava-default-color.txt', ['math › multiplies', 'math › reads config'], 'Difference (- actual, + expected): - 6'],
    ['ava-tap.txt', ['math › multiplies', 'math › reads config'], 'assertion: t.is()'],
    [
      'tap-base.txt',
      ['tap/math.test.js > math > multiplies', 'tap/math.test.js > math > reads config'],
      '✖ math > multiplies > should be equal',
    ],
    [
      'tap-base-color.txt',
      ['tap/math.test.js > math > multiplies', 'tap/math.test.js > math > reads config'],
      '✖ math > multiplies > should be equal',
    ],
    // node-tap's TAP names no error on a line of its own: T carries the fingerprint.
    ['tap-tap.txt', ['tap/math.test.js > math > multiplies', 'tap/math.test.js > math > reads config'], ''],
  ])('%s', (file, tests, error) => {
    const log = fixture(file);
    expect(failingTests(log, null)).toEqual(tests);
    expect(firstError(log)).toBe(error);
  });

  it.each([
    'mocha-spec.txt',
    'mocha-dot.txt',
    'mocha-tap.txt',
    'jest-default.txt',
    'vitest-default.txt',
    'vitest-verbose.txt',
    'node-spec.txt',
    'node-tap.txt',
    'ava-default.txt',
    'ava-tap.txt',
    'tap-base.txt',
    'tap-tap.txt',
  ])('%s: the same failure in another temporary directory at another time has the same fingerprint', (file) => {
    const log = fixture(file);
    const moved = elsewhere(log);
    expect(moved).not.toBe(log);
    expect(tempDirOf(moved)).not.toBe(tempDirOf(log));
    const a = fingerprintFailure({ log, report: null, treeId: '' });
    const b = fingerprintFailure({ log: moved, report: null, treeId: '' });
    expect(a.hash).not.toBeNull();
    expect(b.hash).toBe(a.hash);
  });

  it.each([
    'mocha-spec.txt',
    'mocha-spec-color.txt',
    'mocha-dot.txt',
    'mocha-tap.txt',
    'jest-default.txt',
    'jest-default-color.txt',
    'vitest-default.txt',
    'vitest-default-color.txt',
    'vitest-verbose.txt',
    'node-spec.txt',
    'node-spec-color.txt',
    'node-tap.txt',
    'ava-default.txt',
    'ava-default-color.txt',
    'ava-tap.txt',
    'tap-base.txt',
    'tap-base-color.txt',
    'tap-tap.txt',
  ])('%s: a second real run (rerun/, another temp directory, later) has the same fingerprint', (file) => {
    const first = fixture(file);
    const second = fixture(`rerun/${file}`);
    expect(second).not.toBe(first);
    const fp = (log: string) => fingerprintFailure({ log, report: null, treeId: '' });
    expect(fp(second).hash).toBe(fp(first).hash);
    expect(fp(second).firstError).toBe(fp(first).firstError);
  });

  it.each([
    ['mocha-spec-color.txt', 'mocha-spec.txt'],
    ['jest-default-color.txt', 'jest-default.txt'],
    ['vitest-default-color.txt', 'vitest-default.txt'],
    ['node-spec-color.txt', 'node-spec.txt'],
    ['ava-default-color.txt', 'ava-default.txt'],
    ['tap-base-color.txt', 'tap-base.txt'],
  ])('%s: colour changes nothing (same fingerprint as %s)', (colour, plain) => {
    const c = fixture(colour);
    expect(c).toContain('\u001b[');
    const fp = (log: string) => fingerprintFailure({ log, report: null, treeId: '' }).hash;
    expect(fp(c)).toBe(fp(fixture(plain)));
  });

  it.each(
    (
      [
        ['mocha-spec.txt', MOCHA],
        ['mocha-dot.txt', MOCHA],
        ['jest-default.txt', JEST],
        ['vitest-default.txt', VITEST],
        ['node-spec.txt', NODE_TEST],
        ['ava-default.txt', AVA],
        ['tap-base.txt', NODE_TAP],
        ['node-tap.txt', TAP_STREAM],
      ] as const
    ).map(([file, runner]) => ({ file, runner, name: runner.name })),
  )('$file is detected as $name', ({ file, runner }) => {
    expect(runner.detect(cleanLog(fixture(file)))).toBe(true);
  });
});

describe('the JavaScript runners, line by line', () => {
  it.each([
    [
      'mocha: nested describes join with spaces; a hook failure is named as mocha names it',
      '  3 passing (5ms)\n  2 failing\n\n  1) outer\n       inner\n         deep test:\n     Error: x\n\n  2) outer\n       "before each" hook for "t":\n     Error: y\n',
      ['outer "before each" hook for "t"', 'outer inner deep test'],
    ],
    [
      'mocha: numbered lines before the epilogue are not read',
      '  math\n    1) multiplies\n\n  0 passing (1ms)\n',
      null,
    ],
    [
      'jest: `● Test suite failed to run` names no test',
      '  ● Test suite failed to run\n\n    Cannot find module\n\nTests:       0 total\n',
      null,
    ],
    [
      'vitest: a file that failed to load names no test',
      ' FAIL  a.test.ts [ a.test.ts ]\nError: boom\n Test Files  1 failed (1)\n',
      null,
    ],
    [
      'node --test: nested suites; a suite that fails by a hook is the ID',
      '▶ a\n  ▶ b\n    ✖ c (1ms)\n  ▶ b (2ms)\n▶ a (3ms)\n▶ h\n  ✔ ok (1ms)\n✖ h (2ms)\nℹ tests 2\n\n✖ failing tests:\n\n✖ c (1ms)\n',
      ['a > b > c', 'h'],
    ],
    [
      'ava: the title as it stands on its own line',
      '  ✘ [fail]: suite › t1 Rejected promise returned by test\n  ✘ [fail]: t2\n  ─\n\n  suite › t1\n\n  2 tests failed\n',
      ['suite › t1', 't2'],
    ],
  ])('%s', (_name, log, expected) => {
    expect(failingTests(log, null)).toEqual(expected);
  });

  it.each([
    ['a thrown TypeError', 'TypeError: x is not a function', 'TypeError: x is not a function'],
    ['a custom error class', '    ValidationError: bad input', 'ValidationError: bad input'],
    [
      'an error with a code',
      'Error [ERR_MODULE_NOT_FOUND]: Cannot find package',
      'Error [ERR_MODULE_NOT_FOUND]: Cannot find package',
    ],
    [
      'a test named after an error is not the error',
      '  1) reports an error\n\n  0 passing (1ms)\n  1 failing\n\n  1) reports an error:\n     Error: real one\n',
      'Error: real one',
    ],
    ["mocha's summary is a banner", '  0 passing (1ms)\n  2 failing\n', ''],
    [
      'jest: a suite that failed to run, by its cause',
      "FAIL a.test.js\n  ● Test suite failed to run\n\n    Cannot find module './x' from 'a.test.js'\n\nTests:       0 total\n",
      "Cannot find module './x' from 'a.test.js'",
    ],
    [
      "node:assert's values are joined from the next non-blank line",
      'ℹ tests 1\n    AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value:\n\n      assert.ok(x === 12)\n',
      'AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value: assert.ok(x === 12)',
    ],
    [
      "Node 18's diff: past the `+ actual - expected` header, the two values together",
      "ℹ tests 1\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n  + actual - expected\n\n  + 'nope'\n  - 'hello'\n",
      "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: + 'nope' - 'hello'",
    ],
    [
      'but not from further than three lines on',
      'ℹ tests 1\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n\n\n6 !== 7\n',
      'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
    ],
    [
      'and an error line that does not end in a colon stands alone',
      'ℹ tests 1\nAssertionError [ERR_ASSERTION]: 6 == 7\nnext line\n',
      'AssertionError [ERR_ASSERTION]: 6 == 7',
    ],
  ])('%s', (_name, log, expected) => {
    expect(firstError(log)).toBe(expected);
  });
});

describe('TAP streams', () => {
  it.each([
    ['flat, with and without dashes', 'TAP version 13\nok 1 - a\nnot ok 2 - b\nnot ok 3 c\n1..3\n', ['b', 'c']],
    ['SKIP and TODO are not failures', 'not ok 1 - a # SKIP no\nnot ok 2 - b # TODO later\nnot ok 3 - c\n', ['c']],
    [
      'YAML diagnostics are skipped, even when they quote a test point',
      'not ok 1 - a\n  ---\n  source: |\n    not ok 9 - fake\n  ...\nok 2 - b\n',
      ['a'],
    ],
    [
      'subtests: assertions fail their test, parents are paths',
      '# Subtest: f\n    # Subtest: t\n        not ok 1 - should be equal\n        1..1\n    not ok 1 - t # time=1ms\n    1..1\nnot ok 1 - f\n',
      ['f > t'],
    ],
    ['a failing subtest with no failing child is the ID', '# Subtest: s\n    ok 1 - x\nnot ok 1 - s\n', ['s']],
  ])('%s', (_name, tap, expected) => {
    expect(looksLikeTap(tap)).toBe(true);
    expect(tapFailingTests(tap)).toEqual(expected);
  });

  it('is not told by a line that only starts with ok', () => {
    expect(looksLikeTap('okay then\nnothing\n')).toBe(false);
  });
});

describe('reports from the real runners', () => {
  it.each([
    ['mocha-report.json', 'mocha', ['mocha/math.test.js::math multiplies', 'mocha/math.test.js::math reads config']],
    ['mocha-xunit.xml', 'junit', ['math::multiplies', 'math::reads config']],
    [
      'jest-real-report.json',
      'jest',
      ['jest/math.test.js::math › multiplies', 'jest/math.test.js::math › reads config'],
    ],
    [
      'vitest-report.json',
      'jest',
      ['vitest/math.test.mjs::math › multiplies', 'vitest/math.test.mjs::math › reads config'],
    ],
    ['vitest-real-junit.xml', 'junit', ['math.test.mjs::math > multiplies', 'math.test.mjs::math > reads config']],
    ['node-report.tap', 'tap', ['math > multiplies', 'math > reads config']],
    // node's JUnit reporter names every test's class `test`.
    ['node-report.xml', 'junit', ['test::multiplies', 'test::reads config']],
    // Written by hand in the formats (no dotnet here), see README.md.
    ['xunit-net.hand.xml', 'xunit', ['MathTests.Math.Multiplies', 'MathTests.Math.ReadsConfig']],
    [
      'dotnet.hand.trx',
      'trx',
      ['MathTests.Math.Multiplies', 'MathTests.Math.ReadsConfig', 'MathTests.Math.Rows (2,3)'],
    ],
  ])('%s (%s)', (file, format, expected) => {
    const report = fixture(file);
    expect(reportFormat(report)).toBe(format);
    const repoDir = tempDirOf(report) || undefined;
    expect(failingTests('the log is not read: --- FAIL: TestFromLog', report, repoDir)).toEqual(expected);
    // The same report from another temporary directory names the same tests.
    const moved = elsewhere(report);
    expect(failingTests('', moved, tempDirOf(moved) || undefined)).toEqual(expected);
    if (!file.includes('.hand.')) {
      const second = fixture(`rerun/${file}`);
      expect(tempDirOf(second)).not.toBe(tempDirOf(report));
      expect(failingTests('', second, tempDirOf(second) || undefined)).toEqual(expected);
    }
  });

  it.each([
    ['mocha JSON without failures', '{"stats":{"failures":0},"failures":[],"passes":[]}', null],
    [
      'mocha JSON, a failure with no file',
      '{"stats":{},"failures":[{"fullTitle":"a b"},{"title":"no full"}]}',
      ['a b'],
    ],
    [
      'xUnit.net, a bare <assembly>',
      '<assembly><collection><test name="A.b" result="Fail"/></collection></assembly>',
      ['A.b'],
    ],
    ['trx that is not XML', '<TestRun><Results>', null],
  ])('%s', (_name, report, expected) => {
    expect(failingTests('--- FAIL: FromLog', report)).toEqual(expected);
  });
});

describe('hostile output', () => {
  // Each would take hours if a pattern backtracked quadratically or worse; linear, it takes milliseconds.
  const spaces = ' '.repeat(200_000);
  it.each([
    ['a node --test line of spaces', `ℹ tests 1\n▶ a${spaces}b\n✖ a${spaces}b (1ms)\n`],
    ['a TAP point of spaces', `TAP version 13\nnot ok 1 - a${spaces}b\n# Subtest: x${spaces}y\n`],
    ['an ava title of spaces', `  ✘ [fail]: ${'a '.repeat(200_000)}\n  1 test failed\n`],
    ['an assertion line of colons and spaces', `ℹ tests 1\nAssertionError [ERR_ASSERTION]: ${': '.repeat(200_000)}x\n`],
  ])('%s is read in linear time', (_name, log) => {
    expect(() => failingTests(log, null)).not.toThrow();
    expect(() => firstError(log)).not.toThrow();
  });

  it('an XML prolog of repeated processing instructions is told in linear time', () => {
    expect(reportFormat(`${'<??>'.repeat(50_000)}!`)).toBe('junit');
    expect(reportFormat(`<?xml version="1.0"?><!-- c --><!DOCTYPE t [<!ENTITY a "b">]><assemblies/>`)).toBe('xunit');
    expect(reportFormat('<!DOCTYPE t [ no end')).toBe('junit');
  });
});
