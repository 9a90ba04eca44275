import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportAdvice } from '../../core/fingerprint/advice.js';
import { fingerprintFailure } from '../../core/fingerprint/index.js';
import { detectRunners } from '../../core/fingerprint/runners/index.js';

/**
 * The non-JavaScript runners' fixtures: real output written by
 * scripts/fixtures/fingerprint-native.sh (each suite run twice, the second time
 * in another temporary directory a second later: rerun/<name>), except the
 * `.hand.txt` ones, written by hand for runners that cannot be installed here
 * (nextest, Gradle, dotnet; the script says why).
 */
const dir = join(import.meta.dirname, '..', 'fixtures', 'fingerprint');
const read = (name: string) => readFileSync(join(dir, name), 'utf8');
const fingerprint = (log: string) => fingerprintFailure({ log, report: null, treeId: '' });

const PYTEST_IDS = ['tests/test_math.py::test_multiplies', 'tests/test_math.py::test_reads_config'];
const PYTEST_E = 'E assert 6 == 7';
const UNITTEST_IDS = ['test_math.MathTest.test_multiplies', 'test_math.MathTest.test_reads_config'];
const UNITTEST_E = 'OSError: cannot read <tmp> at <time>';
const GO_IDS = ['TestMultiplies', 'TestReadsConfig'];
const GO_E = 'math_test.go: mul(2, 3) = 6, want 7';
const CARGO_IDS = ['tests::multiplies', 'tests::reads_config'];
const CARGO_E = "thread 'tests::multiplies' panicked at src/lib.rs:";
const RSPEC_IDS = ['spec/math_spec.rb::math multiplies', 'spec/math_spec.rb::math reads config'];
const RSPEC_E = "Failure/Error: it('multiplies') { expect(2 * 3).to eq(7) }";
const MINITEST_IDS = ['MathTest#test_multiplies', 'MathTest#test_reads_config'];
const PHPUNIT_IDS = ['MathTest::testMultiplies', 'MathTest::testReadsConfig'];
const JUNIT_IDS = ['com.example.MathTest::multiplies', 'com.example.MathTest::readsConfig'];
const CTEST_IDS = ['multiplies', 'reads_config'];

/** [fixture, runner detected, failing IDs, E, E is only a banner]. */
const REAL: ReadonlyArray<readonly [string, string, string[], string, boolean]> = [
  ['pytest-q.txt', 'pytest', PYTEST_IDS, PYTEST_E, false],
  ['pytest-q-color.txt', 'pytest', PYTEST_IDS, PYTEST_E, false],
  ['pytest-v.txt', 'pytest', PYTEST_IDS, PYTEST_E, false],
  ['pytest-v-color.txt', 'pytest', PYTEST_IDS, PYTEST_E, false],
  ['pytest-rA.txt', 'pytest', PYTEST_IDS, PYTEST_E, false],
  // No E lines: the FAILURES banner stays skipped, the one-line traceback or the summary line is E.
  ['pytest-tb-line.txt', 'pytest', PYTEST_IDS, '<tmp>: assert 6 == 7', false],
  ['pytest-tb-no.txt', 'pytest', PYTEST_IDS, 'FAILED tests/test_math.py::test_multiplies - assert 6 == 7', false],
  ['unittest-default.txt', 'unittest', UNITTEST_IDS, UNITTEST_E, false],
  ['unittest-v.txt', 'unittest', UNITTEST_IDS, UNITTEST_E, false],
  ['go-default.txt', 'go test', GO_IDS, GO_E, false],
  ['go-v.txt', 'go test', GO_IDS, GO_E, false],
  ['cargo-serial.txt', 'cargo test', CARGO_IDS, CARGO_E, false],
  ['cargo-serial-color.txt', 'cargo test', CARGO_IDS, CARGO_E, false],
  ['cargo-q-serial.txt', 'cargo test', CARGO_IDS, CARGO_E, false],
  ['rspec-progress.txt', 'rspec', RSPEC_IDS, RSPEC_E, false],
  ['rspec-documentation.txt', 'rspec', RSPEC_IDS, RSPEC_E, false],
  ['rspec-color.txt', 'rspec', RSPEC_IDS, RSPEC_E, false],
  // --seed 1 runs test_reads_config first; minitest prints failures in the order it ran them.
  ['minitest-default.txt', 'minitest', MINITEST_IDS, 'IOError: cannot read <tmp> at <time>', false],
  ['minitest-v.txt', 'minitest', MINITEST_IDS, 'IOError: cannot read <tmp> at <time>', false],
  // PHPUnit lists errors before failures.
  ['phpunit-default.txt', 'phpunit', PHPUNIT_IDS, 'RuntimeException: cannot read <tmp> at <time>', false],
  ['phpunit-color.txt', 'phpunit', PHPUNIT_IDS, 'RuntimeException: cannot read <tmp> at <time>', false],
  [
    'phpunit-testdox.txt',
    'phpunit',
    ['Math::Multiplies', 'Math::Reads config'],
    '│ Failed asserting that 6 is identical to 7.',
    false,
  ],
  // JUnit 4 ran readsConfig first.
  [
    'surefire-default.txt',
    'maven surefire',
    JUNIT_IDS,
    'java.lang.IllegalStateException: cannot read <tmp> at <time>',
    false,
  ],
  [
    'surefire-batch.txt',
    'maven surefire',
    JUNIT_IDS,
    'java.lang.IllegalStateException: cannot read <tmp> at <time>',
    false,
  ],
  [
    'ctest-output-on-failure.txt',
    'ctest',
    CTEST_IDS,
    "math_test: <tmp>: main: Assertion `mul(2, 3) == 7' failed.",
    false,
  ],
  // Without --output-on-failure ctest prints no test's output: only its own summary names a failure.
  ['ctest-default.txt', 'ctest', CTEST_IDS, 'The following tests FAILED:', true],
];

const HAND: ReadonlyArray<readonly [string, string, string[], string]> = [
  ['nextest-default.hand.txt', 'cargo nextest', CARGO_IDS, CARGO_E],
  ['gradle-default.hand.txt', 'gradle', JUNIT_IDS, 'java.lang.AssertionError at MathTest.java'],
  [
    'dotnet-default.hand.txt',
    'dotnet test',
    ['FpSuite.MathTest.Multiplies', 'FpSuite.MathTest.ReadsConfig'],
    'Assert.Equal() Failure: Values differ',
  ],
];

describe('native runners, real output', () => {
  it.each(REAL)('%s: detected as %s, failing IDs and first error', (file, runner, ids, e, generic) => {
    const log = read(file);
    expect(detectRunners(log).map((r) => r.name)).toContain(runner);
    const fp = fingerprint(log);
    expect(fp.tests).toEqual(ids);
    expect(fp.firstError).toBe(e);
    expect(fp.generic).toBe(generic);
  });

  it.each(REAL.map(([file]) => [file]))(
    '%s: the second run (another temp path, another time) has the same fingerprint',
    (file) => {
      const first = read(file);
      const second = read(`rerun/${file}`);
      expect(second).not.toBe(first);
      const a = fingerprint(first);
      const b = fingerprint(second);
      expect(b.hash).not.toBeNull();
      expect(b.hash).toBe(a.hash);
      expect(b.firstError).toBe(a.firstError);
    },
  );
});

/** The same failure elsewhere and later: another temporary directory, other times and durations. */
function elsewhere(log: string): string {
  return log
    .replaceAll('/tmp/chalk-fp-native.HAND01', '/tmp/chalk-fp-native.Zq81xW')
    .replace(/2026-12-01T09:40:00/g, '2027-02-11T23:05:59')
    .replace(
      /([0-9]+)(\.[0-9]+)?( ?)(ms|s)\b/g,
      (_m, n: string, f: string | undefined, sp: string, unit: string) => `${Number(n) + 7}${f ?? ''}${sp}${unit}`,
    );
}

describe('native runners, hand-written output (not installable here)', () => {
  it.each(HAND)('%s: detected as %s, failing IDs and first error', (file, runner, ids, e) => {
    const log = read(file);
    expect(detectRunners(log).map((r) => r.name)).toContain(runner);
    const fp = fingerprint(log);
    expect(fp.tests).toEqual(ids);
    expect(fp.firstError).toBe(e);
    expect(fp.generic).toBe(false);
  });

  it.each(HAND.map(([file]) => [file]))('%s: on another temp path at another time, the same fingerprint', (file) => {
    const log = read(file);
    const moved = elsewhere(log);
    expect(moved).not.toBe(log);
    expect(fingerprint(moved).hash).toBe(fingerprint(log).hash);
  });
});

describe("chalk doctor's advice", () => {
  it.each(REAL.map(([file, runner]) => [file, runner]))('%s: %s read, with its report option', (file, runner) => {
    const advice = reportAdvice(read(file));
    expect(advice.runners).toContain(runner);
    expect(advice.testsRead).toBe(true);
    expect(advice.hints.find((h) => h.startsWith(`${runner}: `))).toMatch(/CHALK_TEST_REPORT/);
  });
});

describe('what the runners do not read', () => {
  it.each([
    [
      'cargo --show-output prints passing tests under successes',
      'test result: ok. 1 passed\nsuccesses:\n\n---- tests::adds stdout ----\nhi\n',
    ],
    [
      'phpunit risky tests are not failures',
      'PHPUnit 9.6.7\n\nThere was 1 risky test:\n\n1) MathTest::testNothing\nThis test did not perform any assertions\n\nOK, but incomplete, skipped, or risky tests!\nTests: 1, Assertions: 0, Risky: 1.\n',
    ],
    [
      'ctest tests that did not run are not failures',
      'Test project /tmp/x/build\nThe following tests did not run:\n\t  4 - skipped (Disabled)\n',
    ],
    ['a make error names no test', 'make: *** [Makefile:3: test] Error 1\n'],
  ])('%s', (_name, log) => {
    expect(fingerprint(log).tests).toBeNull();
  });

  it('a different failure gives a different fingerprint', () => {
    const log = read('pytest-q.txt');
    expect(fingerprint(log.replaceAll('assert 6 == 7', 'assert 5 == 7')).hash).not.toBe(fingerprint(log).hash);
  });
});
