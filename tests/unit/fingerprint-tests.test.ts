import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failingTests, reportFormat, testsFromOutput, testsFromReport } from '../../core/fingerprint/index.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'fingerprint', name), 'utf8');

describe('failing tests from runner output', () => {
  it.each([
    [
      'pytest, coloured',
      'pytest-color.out.txt',
      [
        'tests/test_app.py::TestMarker::test_no_marker',
        'tests/test_app.py::test_quote',
        'tests/test_app.py::test_timing',
      ],
    ],
    [
      'pytest, plain',
      'pytest-plain.out.txt',
      [
        'tests/test_app.py::TestMarker::test_no_marker',
        'tests/test_app.py::test_quote',
        'tests/test_app.py::test_timing',
      ],
    ],
    ['go test', 'go-test.out.txt', ['TestAdd', 'TestTable', 'TestTable/case_1']],
    ['cargo test', 'cargo.out.txt', ['tests::no_marker', 'tests::panics']],
    [
      'jest (a top-level test too)',
      'jest.out.txt',
      ['math › add › adds two numbers', 'math › multiplies', 'top level fails'],
    ],
  ])('%s', (_name, file, expected) => {
    expect(failingTests(fixture(file), null)).toEqual(expected);
  });

  it.each([
    ['pytest needs a :: id', 'FAILED tests/test_a.py - boom', []],
    ['pytest id ends at a space', 'FAILED a.py::t[x y] - e', ['a.py::t[x']],
    ['pytest must start the line', '  FAILED a.py::t', []],
    ['go may be indented with tabs', '\t--- FAIL: TestX (0.01s)', ['TestX']],
    ['go PASS lines are not failures', '--- PASS: TestX (0.01s)', []],
    ['cargo ok lines are not failures', 'test a::b ... ok', []],
    ['cargo FAILED with trailing text', 'test a::b ... FAILED (timeout)', ['a::b']],
    ['jest needs a › separator', '  ● top level fails', []],
    ['jest trailing spaces trimmed', '  ● A › b c   ', ['A › b c']],
    ['CR and colour stripped', '\u001b[31m--- FAIL: TestX\u001b[0m (0.00s)\r', ['TestX']],
    ['a unicode space is not a separator', 'FAILED\u00a0a.py::t', []],
    ['repeats kept in order', '--- FAIL: B\n--- FAIL: A\n--- FAIL: B', ['B', 'A', 'B']],
  ])('%s', (_name, log, expected) => {
    expect(testsFromOutput(log)).toEqual(expected);
  });

  it('gives UNKNOWN (null), never zero, when the output names no test', () => {
    expect(failingTests('make: *** [test] Error 1\n', null)).toBeNull();
    expect(failingTests('', null)).toBeNull();
  });

  it('sorts in byte order and removes repeats', () => {
    expect(failingTests('--- FAIL: b\n--- FAIL: B\n--- FAIL: a\n--- FAIL: B\n--- FAIL: é\n--- FAIL: z', null)).toEqual([
      'B',
      'a',
      'b',
      'z',
      'é',
    ]);
  });
});

describe('failing tests from a report', () => {
  it.each([
    ['pytest JUnit XML', 'pytest-junit.xml', 'junit'],
    ['vitest JUnit XML', 'vitest-junit.xml', 'junit'],
    ['jest --json', 'jest-report.json', 'jest'],
    ['go test -json', 'go-test.jsonl', 'go'],
  ])('tells %s apart by content', (_name, file, format) => {
    expect(reportFormat(fixture(file))).toBe(format);
  });

  it.each([
    [
      'pytest JUnit XML (entities decoded)',
      'pytest-junit.xml',
      ['tests.test_app.TestMarker::test_no_marker', 'tests.test_app::test_quote', 'tests.test_app::test_timing'],
    ],
    [
      'vitest JUnit XML (a line break in a name becomes a space)',
      'vitest-junit.xml',
      [
        'math.test.mjs::math > add > adds two numbers',
        'math.test.mjs::math > multiplies across lines',
        'math.test.mjs::top level fails',
      ],
    ],
    [
      'jest --json (file relative to the repository)',
      'jest-report.json',
      [
        'math.test.mjs::math › add › adds two numbers',
        'math.test.mjs::math › multiplies across lines',
        'math.test.mjs::top level fails',
      ],
    ],
    [
      'go test -json (package fail events and build errors name no test)',
      'go-test.jsonl',
      [
        'example.com/demo/sub::TestAdd',
        'example.com/demo::TestAdd',
        'example.com/demo::TestTable',
        'example.com/demo::TestTable/case_1',
      ],
    ],
  ])('%s', (_name, file, expected) => {
    expect(failingTests('this log is ignored: --- FAIL: TestFromLog', fixture(file))).toEqual(expected);
  });

  it.each([
    [
      'JUnit: failure or error child, classname optional, self-closing and skipped ignored',
      `\uFEFF  <?xml version="1.0"?>
<testsuites><testsuite name="outer"><testsuite name="inner">
  <testcase classname="demo" name="no_marker"><failure message="AssertionError: BROKEN exists"/></testcase>
  <testcase name="bare"><error type="E">boom</error></testcase>
  <testcase classname="demo" name="passes"/>
  <testcase classname="demo" name="skipped"><skipped/></testcase>
  <testcase classname="demo" name="output only"><system-out>&lt;failure&gt;</system-out></testcase>
</testsuite></testsuite></testsuites>`,
      ['bare', 'demo::no_marker'],
    ],
    [
      'JUnit: the five XML entities and numeric references decoded once',
      '<testsuite><testcase classname="a&amp;b" name="&lt;x&gt; &quot;q&quot; &apos;s&apos; &#38; &#x41; &amp;lt;"><failure/></testcase></testsuite>',
      ['a&b::<x> "q" \'s\' & A &lt;'],
    ],
    [
      'JUnit: entities a DOCTYPE declares are not expanded',
      '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY boom "expanded">]><testsuite><testcase name="&boom;"><failure/></testcase></testsuite>',
      ['&boom;'],
    ],
    [
      'JUnit: a single testsuite without testsuites',
      '<testsuite><testcase classname="c" name="n"><failure/></testcase></testsuite>',
      ['c::n'],
    ],
    ['JUnit: a report without failures names no test (UNKNOWN)', '<testsuite><testcase name="ok"/></testsuite>', null],
    [
      'jest: a suite that failed to run names no test; non-string titles skipped',
      JSON.stringify({
        testResults: [
          { name: '/work/repo/src/broken.test.js', status: 'failed', assertionResults: [] },
          {
            name: '/elsewhere/a.test.js',
            assertionResults: [
              { ancestorTitles: ['A', 7, 'B'], title: 't', status: 'failed' },
              { ancestorTitles: ['A'], title: 'ok', status: 'passed' },
            ],
          },
          { assertionResults: [{ ancestorTitles: [], title: 'no file', status: 'failed' }] },
        ],
      }),
      ['/elsewhere/a.test.js::A › B › t', 'no file'],
    ],
    [
      'go: a Test without a Package, and non-string fields',
      '{"Action":"fail","Test":"TestNoPkg"}\n{"Action":"fail","Package":5,"Test":"TestNumPkg"}\n{"Action":"fail","Package":"p","Test":""}\n[1,2]\n',
      ['TestNoPkg', 'TestNumPkg'],
    ],
    ['a report that cannot be parsed gives UNKNOWN', '<not xml', null],
    ['jest JSON that is not an object is read as go events', '["testResults"]', null],
    ['whitespace only', ' \n', null],
  ])('%s', (_name, report, expected) => {
    expect(failingTests('--- FAIL: FromLog', report)).toEqual(expected);
  });

  it('falls back to the output only when there is no report, or an empty one', () => {
    expect(failingTests('--- FAIL: FromLog', '')).toEqual(['FromLog']);
    expect(failingTests('--- FAIL: FromLog', null)).toEqual(['FromLog']);
  });

  it('tells jest by the testResults key, a go stream by anything else', () => {
    expect(reportFormat('{"testResults": []}')).toBe('jest');
    expect(reportFormat('{"Action":"fail","Package":"p","Test":"T"}')).toBe('go');
    expect(reportFormat('{"testResults": []}\n{"testResults": []}')).toBe('go');
    expect(testsFromReport('{"testResults": [], "x": 1}')).toEqual([]);
  });

  it('strips a custom repository directory from jest file names', () => {
    const report = JSON.stringify({
      testResults: [{ name: '/src/app/a.test.ts', assertionResults: [{ title: 't', status: 'failed' }] }],
    });
    expect(testsFromReport(report, '/src/app/')).toEqual(['a.test.ts::t']);
  });
});
