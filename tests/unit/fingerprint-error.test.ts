import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstError, isGenericError, isSpecificError, normaliseError } from '../../core/fingerprint/index.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'fingerprint', name), 'utf8');

describe('the first error line', () => {
  it.each([
    // The runners' error lines (runners/*.ts), not their banners.
    ['pytest: the E line, past the FAILURES banner', 'pytest-color.out.txt', 'E AssertionError: BROKEN exists at 0x?'],
    ['go: the failing check, past --- FAIL', 'go-test.out.txt', 'demo_test.go: got 3, want 4'],
    ['cargo: the panic, past the FAILED line', 'cargo.out.txt', "thread 'tests::no_marker' panicked at src/lib.rs:"],
    [
      'jest: the matcher line, past FAIL <file>',
      'jest.out.txt',
      'expect(received).toBe(expected) // Object.is equality',
    ],
  ])('%s', (_name, file, expected) => {
    expect(firstError(fixture(file))).toBe(expected);
  });

  it.each([
    ['each keyword matches', 'ok\nsomething error here\n', 'something error here'],
    ['Error: needs its colon', 'Error without colon\nTypeError: x', 'TypeError: x'],
    ['ERR!', 'npm ERR! code 1', 'npm ERR! code 1'],
    ['FAIL', 'FAIL demo', 'FAIL demo'],
    [
      'panic',
      'panic: runtime error: index out of range [3] with length 2',
      'panic: runtime error: index out of range [3] with length 2',
    ],
    ['Traceback', 'Traceback (most recent call last):', 'Traceback (most recent call last):'],
    ['assert', 'assertion failed: left == right', 'assertion failed: left == right'],
    ['case-sensitive: ERROR and Fail do not match', 'ERROR x\nFail y\nAssert z', ''],
    [
      'colour codes and CR removed first',
      '\u001b[1;31mAssertionError: BROKEN exists\u001b[0m\r\n',
      'AssertionError: BROKEN exists',
    ],
    ['nothing matches', 'all good\n', ''],
    ['empty log', '', ''],
  ])('%s', (_name, log, expected) => {
    expect(firstError(log)).toBe(expected);
  });
});

describe('normalising the first error', () => {
  it.each([
    ['ISO date', 'at 2026-11-30 failed', 'at <time> failed'],
    ['ISO date and time with fraction and Z', 'at 2026-11-30T12:00:01.123Z failed', 'at <time> failed'],
    ['ISO with a space and an offset', 'at 2026-11-30 12:00:01,5+05:30 failed', 'at <time> failed'],
    ['ISO with a compact offset', '2026-11-30T12:00-0800 x', '<time> x'],
    ['clock time', 'at 12:34:56 failed', 'at <time> failed'],
    ['clock time with fraction', 'at 12:34:56.789 failed', 'at <time> failed'],
    ['addresses', 'BROKEN exists at 0x7f3a2b and 0xDEADbeef', 'BROKEN exists at 0x? and 0x?'],
    ['/tmp paths', 'open /tmp/pytest-of-root/x.txt: no such file', 'open <tmp>: no such file'],
    ['/var/tmp and /var/folders', 'a /var/tmp/abc b /var/folders/xy/T/z', 'a <tmp> b <tmp>'],
    ['/private/var/folders', 'at /private/var/folders/q/T/f.js"', 'at <tmp>"'],
    ['temp path ends at a parenthesis', 'f(/tmp/abc)', 'f(<tmp>)'],
    ['/tmp without a trailing slash is kept', 'in /tmp now', 'in /tmp now'],
    ['line and column', 'Error: boom at src/a.ts:12:7', 'Error: boom at src/a.ts'],
    ['line only (the colon after it stays)', 'src/a.py:12: AssertionError', 'src/a.py: AssertionError'],
    ['a panic line', "thread 'x' panicked at src/lib.rs:8:22:", "thread 'x' panicked at src/lib.rs:"],
    [
      "a panic line's thread ID",
      "thread 'x' (23599) panicked at src/lib.rs:8:22:",
      "thread 'x' panicked at src/lib.rs:",
    ],
    ['durations of every unit', 'took 12ms, 1.5 s, 3ns 4us 5m 6h', 'took <d>, <d>, <d> <d> <d> <d>'],
    ['duration in parentheses', '--- FAIL: TestX (0.01s)', '--- FAIL: TestX (<d>)'],
    ['a number before letters is not a duration', 'expected 3 items, got 5 sheep', 'expected 3 items, got 5 sheep'],
    ['unit followed by a word character is not a duration', 'size 10mb x 2s_x', 'size 10mb x 2s_x'],
    ['duration at the end of the line', 'timeout after 30s', 'timeout after <d>'],
    ['timestamps go before :line:col', 'Error at 12:34:56 in a.js:1:2', 'Error at <time> in a.js'],
    ['spacing collapsed and trimmed', '  \tAssertionError:   a \t b  ', 'AssertionError: a b'],
    ['the e2e example', 'AssertionError: BROKEN exists at 0x7f3a2b', 'AssertionError: BROKEN exists at 0x?'],
  ])('%s', (_name, line, expected) => {
    expect(normaliseError(line)).toBe(expected);
  });
});

describe('generic errors', () => {
  it.each([
    ['FAIL', true],
    ['FAIL example.com/demo <d>', true],
    ['FAIL src/a.test.js', true],
    ['FAILED', false],
    ['npm ERR! Test failed. See above for more details.', true],
    ['npm ERR! code ELIFECYCLE', false],
    ['error', true],
    ['error:', true],
    ['error: x', false],
    ['3 failed, 1 passed in <d>', true],
    ['===== 2 failed in <d> =====', true],
    ['3 failed', true],
    ['3 failedx', false],
    ['error: test failed, to rerun pass `--lib`', true],
    ['=================================== FAILURES ===================================', true],
    ['Traceback (most recent call last):', true],
    ['AssertionError: BROKEN exists', false],
    ['--- FAIL: TestX (<d>)', true], // go's banner (runners/go.ts): it names the test, not the error
  ])('%s -> generic %s', (e, generic) => {
    expect(isGenericError(e)).toBe(generic);
  });

  it('calls E specific only when it is non-empty and not a banner', () => {
    expect(isSpecificError('')).toBe(false);
    expect(isSpecificError('FAIL')).toBe(false);
    expect(isSpecificError('AssertionError: x')).toBe(true);
  });
});
