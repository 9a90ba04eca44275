import { NON_SPACE as N } from '../log.js';
import { anyLine } from './detect.js';
import { idsFromLines } from './lines.js';
import type { Runner } from './types.js';

/** cargo test's options that take the next word as their value. */
const CARGO_VALUE_OPTIONS = [
  '-p',
  '--package',
  '--test',
  '--bench',
  '--example',
  '--bin',
  '--features',
  '-F',
  '--target',
  '--target-dir',
  '--manifest-path',
  '-j',
  '--jobs',
  '--profile',
  '--color',
  '--config',
  '-Z',
  '--exclude',
  '--message-format',
];

/** A panic (`thread 'tests::x' panicked at src/lib.rs:10:9:`) and a compile error (`error[E0308]: ...`). */
const RUST_ERRORS = [/^thread '.*'( \([0-9]+\))? panicked at /, /^error(\[E[0-9]+\])?: (?!test failed)\S/];

/**
 * cargo test: `test tests::adds ... FAILED`, with `-q` `tests::adds --- FAILED` (not the
 * `---- tests::adds stdout ----` headers: `--show-output` prints them for passing tests too).
 * The ID is the test's path in its crate.
 */
export const CARGO: Runner = {
  name: 'cargo test',
  detect: anyLine(new RegExp(`^test ${N}+ \\.\\.\\. `, 'm'), /^test result: /m),
  failingTests: (log) =>
    idsFromLines(log, [
      { pattern: new RegExp(`^test (${N}+) \\.\\.\\. FAILED`) },
      { pattern: new RegExp(`^(${N}+) --- FAILED$`) },
    ]),
  errorLine: RUST_ERRORS,
  banner: [
    /^failures:$/,
    /^---- \S+ stdout ----$/,
    /^test result: /,
    /^error: test failed/,
    /^test \S+ \.\.\. FAILED/,
    /^\S+ --- FAILED$/,
    /^note: run with `RUST_BACKTRACE/,
  ],
  reportHint:
    'cargo test writes no stable report: use cargo nextest with `[profile.default.junit] path = "junit.xml"` in .config/nextest.toml, and CHALK_TEST_REPORT=target/nextest/default/junit.xml',
  // `cargo test -- --exact tests::adds tests::subs` (the name filter given is dropped: it is these now).
  select: {
    commands: [['cargo', 'test']],
    valueOptions: CARGO_VALUE_OPTIONS,
    args: ({ ids, report }) =>
      !report && ids.every((id) => /^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*$/.test(id))
        ? { args: [], after: ['--exact', ...ids] }
        : null,
  },
};

/**
 * cargo nextest: `        FAIL [   0.004s] calc tests::adds` (newer versions add a `(1/3)`
 * counter). The ID is the test's path, as cargo test names it, without the binary.
 */
export const NEXTEST: Runner = {
  name: 'cargo nextest',
  detect: anyLine(/^\s*Starting [0-9]+ tests? across /m, /^\s+Summary \[/m),
  failingTests: (log) =>
    idsFromLines(log, [
      {
        pattern: new RegExp(
          `^\\s*(?:FAIL|SIGSEGV|SIGABRT|SIGKILL|TIMEOUT|ABORT|LEAK-FAIL) \\[ *[0-9.]+s\\] (?:\\([0-9]+/[0-9]+\\) )?${N}+ (${N}+)`,
        ),
      },
    ]),
  errorLine: RUST_ERRORS,
  banner: [
    /^\s*(FAIL|PASS|SIGSEGV|SIGABRT|TIMEOUT|SKIP|START|ABORT) \[/,
    /^\s*Summary \[/,
    /^\s*Starting [0-9]+ tests?/,
    /^\s*-+ STD(OUT|ERR): /,
    /^error: test run failed$/,
    /^\s*Cancelling due to test failure/,
  ],
  reportHint:
    '`[profile.default.junit] path = "junit.xml"` in .config/nextest.toml, and CHALK_TEST_REPORT=target/nextest/default/junit.xml',
};
