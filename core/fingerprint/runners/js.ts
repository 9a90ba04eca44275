import { logLines } from '../log.js';
import { looksLikeTap, tapFailingTests } from '../tap.js';
import { allOf, anyLine } from './detect.js';
import { exactlyOneOf, orNull, regexEscape, relativeFile, splitReportId, unique } from './lines.js';
import type { Runner } from './types.js';

/**
 * The JavaScript runners, as they print with no report configured (colour
 * removed first). Each names a failing test the way the runner itself does,
 * so the ID is the same with every reporter of one runner:
 *
 * | runner      | output                                       | ID                               |
 * | mocha       | `  1) math` / `       multiplies:` (epilogue) | `math multiplies` (its fullTitle) |
 * | jest        | `  ● math › multiplies`                      | `math › multiplies`              |
 * | vitest      | ` FAIL  math.test.mjs > math > multiplies`   | `math.test.mjs > math > multiplies` |
 * | node --test | `▶ math` / `  ✖ multiplies (1ms)`            | `math > multiplies`              |
 * | ava         | `  ✘ [fail]: math › multiplies`              | `math › multiplies`              |
 * | node-tap    | ` FAIL  t.js ...` / `✖ math > multiplies > should be equal` | `t.js > math > multiplies` |
 * | any TAP     | `not ok 2 - multiplies` under `# Subtest: math` | `math > multiplies`           |
 */

/**
 * A line naming a JavaScript error: `AssertionError [ERR_ASSERTION]: ...`,
 * `Error: cannot read ...`, `TypeError: x is not a function`, and jest's
 * matcher line `expect(received).toBe(expected)`.
 */
const JS_ERROR = /^\s*(?:Uncaught )?(?:[A-Z][A-Za-z0-9_$]*)?(?:Error|Exception)(?: \[[A-Z0-9_]+\])?: \S/;
const JEST_MATCHER = /^\s*(?:Error: )?expect\((received|value)\)\.\S/;

/**
 * node:assert's messages that end in `:` and put the values on the next line
 * (`Expected values to be strictly equal:` then `6 !== 7`); mocha, node --test
 * and ava print them so.
 */
const NODE_ASSERT_INTRO = [/^\s*AssertionError \[ERR_ASSERTION\]: .*:\s*$/];

/** Options of mocha, jest and vitest that take the next word as their value. */
const MOCHA_VALUE_OPTIONS = [
  '-g',
  '--grep',
  '-f',
  '--fgrep',
  '-R',
  '--reporter',
  '-O',
  '--reporter-option',
  '--reporter-options',
  '-r',
  '--require',
  '-t',
  '--timeout',
  '-s',
  '--slow',
  '--config',
  '--package',
  '--ui',
  '-u',
  '--extension',
  '--ignore',
  '--spec',
  '--file',
  '-j',
  '--jobs',
  '--retries',
];
const JEST_VALUE_OPTIONS = [
  '-c',
  '--config',
  '--rootDir',
  '--roots',
  '-t',
  '--testNamePattern',
  '--outputFile',
  '--reporters',
  '--maxWorkers',
  '-w',
  '--testPathPattern',
  '--testPathIgnorePatterns',
  '--coverageDirectory',
  '--selectProjects',
  '--shard',
  '--testTimeout',
  '--testRegex',
  '--env',
  '--testEnvironment',
  '--seed',
];
const VITEST_VALUE_OPTIONS = [
  '-c',
  '--config',
  '-r',
  '--root',
  '--dir',
  '--project',
  '--reporter',
  '--outputFile',
  '--environment',
  '--pool',
  '-t',
  '--testNamePattern',
  '--mode',
  '--shard',
  '--exclude',
  '--maxWorkers',
  '--minWorkers',
  '--retry',
  '--testTimeout',
  '--hookTimeout',
  '--workspace',
  '--silent',
  '--bail',
  '--changed',
];

/** mocha's epilogue: after `  N failing`, `  1) suite` then deeper title lines, the last ending in `:`. */
function mochaTests(log: string): string[] | null {
  const lines = logLines(log);
  const ids: string[] = [];
  const start = lines.findIndex((l) => /^\s+\d+ failing$/.test(l));
  if (start < 0) return null;
  for (let i = start + 1; i < lines.length; i++) {
    const m = /^(\s*)\d+\) (.*\S)\s*$/.exec(lines[i] as string);
    if (!m) continue;
    const parts = [m[2] as string];
    const indent = (m[1] as string).length;
    // The title continues on deeper lines until one ends with `:` (at most a few: describes nest).
    for (let j = i + 1; !(parts[parts.length - 1] as string).endsWith(':') && j < lines.length && j < i + 20; j++) {
      const next = lines[j] as string;
      const nextIndent = next.length - next.trimStart().length;
      if (next.trim() === '' || nextIndent <= indent) break;
      parts.push(next.trim());
    }
    const last = parts[parts.length - 1] as string;
    if (!last.endsWith(':')) continue;
    parts[parts.length - 1] = last.slice(0, -1);
    ids.push(parts.join(' '));
  }
  return orNull(ids);
}

export const MOCHA: Runner = {
  name: 'mocha',
  detect: anyLine(/^\s+\d+ passing \(/m, /^\s+\d+ failing$/m),
  failingTests: mochaTests,
  errorLine: [JS_ERROR],
  errorContinues: NODE_ASSERT_INTRO,
  banner: [/^\d+ (passing|failing|pending)( \(.*\))?$/],
  reportHint:
    'mocha --reporter json --reporter-option output=test-report.json (or --reporter xunit), and CHALK_TEST_REPORT=test-report.json',
  // `mocha SPECS --grep '^(?:suite test)$'`: the full titles, exactly (a JSON report's are after `FILE::`).
  select: {
    commands: [['mocha']],
    packageScripts: true,
    valueOptions: MOCHA_VALUE_OPTIONS,
    args: ({ ids, report, positionals }) => {
      const titles = ids.map((id) => (report ? splitReportId(id).name : id));
      return { args: [...positionals, '--grep', exactlyOneOf(unique(titles))] };
    },
  },
};

/** jest: `● Describe › test` headers; a top-level test has no `›`, and `● Test suite failed to run` names none. */
function jestTests(log: string): string[] | null {
  const ids: string[] = [];
  for (const line of logLines(log)) {
    const m = /^\s*● (.*\S)\s*$/.exec(line);
    if (!m || m[1] === 'Test suite failed to run') continue;
    ids.push(m[1] as string);
  }
  return orNull(ids);
}

export const JEST: Runner = {
  name: 'jest',
  detect: allOf(anyLine(/^Tests:\s+\d+ /m), anyLine(/^\s*● /m)),
  failingTests: jestTests,
  // A suite that failed to run names its cause without an error class: `Cannot find module './x' from 'a.test.js'`.
  errorLine: [JEST_MATCHER, JS_ERROR, /^\s+Cannot find module '.*' from '.*'$/],
  banner: [/^(Test Suites|Tests|Snapshots|Time):/, /^● /],
  reportHint: 'jest --json --outputFile=test-report.json, and CHALK_TEST_REPORT=test-report.json',
  // `jest FILES -t '^(?:Describe test)$'`: the full names (jest joins the titles with spaces), and
  // the files when the report names them.
  select: {
    commands: [['jest']],
    packageScripts: true,
    valueOptions: JEST_VALUE_OPTIONS,
    args: ({ ids, report, positionals }) => {
      const parts = ids.map((id) => (report ? splitReportId(id) : { file: '', name: id }));
      const files = unique(parts.map((p) => p.file));
      const byFile = report && files.every(relativeFile);
      const names = unique(parts.map((p) => p.name.split(' › ').join(' ')));
      return { args: [...(byFile ? files.map(regexEscape) : positionals), '-t', exactlyOneOf(names)] };
    },
  },
};

export const VITEST: Runner = {
  name: 'vitest',
  detect: anyLine(/^\s*Test Files\s+\d+ /m, /^\s*RUN\s+v\d+\.\d+/m),
  failingTests: (log) => {
    const ids: string[] = [];
    for (const line of logLines(log)) {
      const m = /^\s*FAIL\s+(\S.* > .*\S)\s*$/.exec(line);
      if (m) ids.push(m[1] as string);
    }
    return orNull(ids);
  },
  errorLine: [JS_ERROR],
  banner: [/^(Test Files|Tests|Start at|Duration) /, /^⎯+/],
  reportHint:
    'vitest run --reporter=default --reporter=junit --outputFile.junit=test-report.xml (or --reporter=json), and CHALK_TEST_REPORT=test-report.xml',
  // `vitest run FILES`: the failing tests' files (the first part of ` FAIL  file > suite > test`,
  // or of a report's `file::name`), in place of the filters given.
  select: {
    commands: [['vitest', 'run'], ['vitest']],
    packageScripts: true,
    valueOptions: VITEST_VALUE_OPTIONS,
    args: ({ ids, report }) => {
      const files = unique(ids.map((id) => (report ? splitReportId(id).file : (id.split(' > ')[0] as string))));
      return files.every(relativeFile) ? { args: files } : null;
    },
  },
};

/** node --test's spec reporter: `▶ suite` opens a suite; `✖ name (1ms)` fails a test, or closes a suite. */
function nodeSpecTests(log: string): string[] | null {
  const ids: string[] = [];
  const open: { indent: number; name: string; failedChild: boolean }[] = [];
  for (const line of logLines(log)) {
    if (/^✖ failing tests:\s*$/.test(line)) break; // the summary repeats the failures without their suites
    const m = /^(\s*)(▶|✖) (.*)$/.exec(line);
    if (!m) continue;
    const indent = (m[1] as string).length;
    const name = (m[3] as string).trimEnd().replace(/ \([0-9.]+m?s\)$/, '');
    while (open.length > 0 && (open[open.length - 1]?.indent ?? 0) > indent) open.pop();
    const last = open[open.length - 1];
    if (last !== undefined && last.indent === indent) {
      // `▶ name (1ms)` or `✖ name (1ms)` at a suite's own indent closes it; a suite that
      // failed with no failing test (a hook) is an ID itself.
      open.pop();
      if (last.name === name) {
        if (m[2] === '✖' && !last.failedChild) ids.push([...open.map((s) => s.name), name].join(' > '));
        continue;
      }
    }
    if (m[2] === '▶') {
      open.push({ indent, name, failedChild: false });
      continue;
    }
    for (const s of open) s.failedChild = true;
    ids.push([...open.map((s) => s.name), name].join(' > '));
  }
  return orNull(ids);
}

export const NODE_TEST: Runner = {
  name: 'node --test',
  detect: anyLine(/^ℹ tests \d+$/m),
  failingTests: nodeSpecTests,
  errorLine: [JS_ERROR],
  errorContinues: NODE_ASSERT_INTRO,
  banner: [/^✖ failing tests:$/, /^ℹ /],
  reportHint:
    'node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=tap --test-reporter-destination=test-report.tap, and CHALK_TEST_REPORT=test-report.tap',
};

/**
 * ava's default reporter: `✘ [fail]: title` (a thrown error adds its message
 * after the title, e.g. `Error thrown in test`); the title stands alone on a
 * line of the failure details below, which tells where it ends.
 */
const MAX_TITLE = 1000;

function avaTests(log: string): string[] | null {
  const lines = logLines(log);
  const standalone = new Set(lines.map((l) => l.trim()));
  const ids: string[] = [];
  for (const line of lines) {
    const m = /^\s*✘ \[fail\]: (.*\S)\s*$/.exec(line);
    if (!m) continue;
    const text = m[1] as string;
    let id = text;
    // Titles longer than MAX_TITLE are not looked for (each candidate is a slice: quadratic on a hostile line).
    for (let end = text.indexOf(' '); end > 0 && end <= MAX_TITLE; end = text.indexOf(' ', end + 1)) {
      if (standalone.has(text.slice(0, end))) id = text.slice(0, end);
    }
    ids.push(standalone.has(text) ? text : id);
  }
  return orNull(ids);
}

/** ava's failed comparison: `Difference (- actual, + expected):`, the values on the next line. */
const AVA_DIFFERENCE = /^\s+Difference \(- actual, \+ expected\):$/;

export const AVA: Runner = {
  name: 'ava',
  detect: anyLine(/^\s*✘ \[fail\]: /m, /^\s*\d+ tests? failed$/m),
  failingTests: avaTests,
  errorLine: [AVA_DIFFERENCE, JS_ERROR],
  errorContinues: [AVA_DIFFERENCE],
  banner: [/^\d+ tests? failed$/, /^✘ \[fail\]: /, /^Error thrown in test:?$/],
  reportHint: 'ava --tap > test-report.tap (the TAP stream is the report), and CHALK_TEST_REPORT=test-report.tap',
};

/**
 * node-tap's base reporter: ` FAIL  file.js 2 failed of 3` then one
 * `✖ subtest > subtest > assertion` line per failed assertion (the
 * assertion's name, after the last ` > `, is not part of the test's ID).
 */
function nodeTapTests(log: string): string[] | null {
  const ids: string[] = [];
  let file = '';
  for (const line of logLines(log)) {
    const f = /^\s*FAIL\s+(\S+) \d+ failed of \d+/.exec(line);
    if (f) {
      file = f[1] as string;
      continue;
    }
    const m = /^✖ (.*\S)\s*$/.exec(line);
    if (!m) continue;
    const path = m[1] as string;
    const cut = path.lastIndexOf(' > ');
    const test = cut < 0 ? path : path.slice(0, cut);
    ids.push(file === '' ? test : `${file} > ${test}`);
  }
  return orNull(ids);
}

export const NODE_TAP: Runner = {
  name: 'tap',
  detect: anyLine(/^\s*FAIL\s+\S+ \d+ failed of \d+/m),
  failingTests: nodeTapTests,
  // The failed assertion, as the base reporter names it: `✖ math > multiplies > should be equal`.
  errorLine: [/^✖ \S.* > /, JS_ERROR],
  banner: [/^(FAIL|PASS|RUNS) \S+ \d+ /, /^(Asserts|Suites):/],
  reportHint:
    'tap --reporter=tap > test-report.tap (the TAP stream is the report), and CHALK_TEST_REPORT=test-report.tap',
};

/** Any TAP stream on the output: mocha --reporter tap, node --test --test-reporter=tap, ava --tap, tap --reporter=tap. */
export const TAP_STREAM: Runner = {
  name: 'TAP',
  detect: looksLikeTap,
  failingTests: (log) => orNull(tapFailingTests(log)),
  // node --test's one-line diagnostic `error: 'message'`; mocha's diagnostics carry the JS error line itself.
  errorLine: [JS_ERROR, /^\s+error: '.*\S.*'$/],
  errorContinues: NODE_ASSERT_INTRO,
  banner: [
    /^(not )?ok\b/,
    /^# (tests|pass|fail|suites|cancelled|skipped|todo|duration_ms|time)\b/,
    /^error: '\d+ subtests? failed'$/,
  ],
  reportHint:
    'write the TAP stream to a file (e.g. node --test --test-reporter=tap > test-report.tap), and CHALK_TEST_REPORT=test-report.tap',
};

export const JS_RUNNERS: readonly Runner[] = [MOCHA, JEST, VITEST, NODE_TEST, AVA, NODE_TAP, TAP_STREAM];
