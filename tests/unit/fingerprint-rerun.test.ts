import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandWords } from '../../core/fingerprint/command-words.js';
import { selectiveRerun } from '../../core/fingerprint/rerun.js';

/**
 * The flaky rerun's command, pure: the rubric's last step with the failing
 * tests in place of its paths, where the runner can select them; null (the
 * whole rubric) where it cannot. IDs come out of a sandbox: they are only
 * ever quoted words.
 */

const PYTEST_LOG = `============================= test session starts ==============================
FAILED tests/test_calc.py::test_add - assert 3 == 4
FAILED tests/test_calc.py::test_div[0-1] - ZeroDivisionError
========================= 2 failed, 8 passed in 0.10s ==========================
`;
const GO_LOG = `--- FAIL: TestAdd (0.00s)
    calc_test.go:8: Add(1, 2) = 3, want 4
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/case_1 (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
`;
const CARGO_LOG = `running 3 tests
test tests::adds ... FAILED
test tests::subs ... ok
test result: FAILED. 1 passed; 1 failed; 0 ignored
`;
const VITEST_LOG = ` RUN  v2.1.9 /work/repo

 ❯ src/math.test.ts (3 tests | 1 failed) 5ms
 FAIL  src/math.test.ts > math > multiplies
AssertionError: expected 6 to be 7
 Test Files  1 failed | 9 passed (10)
`;
const MOCHA_LOG = `  greet
    1) says hello

  0 passing (5ms)
  1 failing

  1) greet
       says hello:
     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
`;
const JEST_LOG = `  ● math › multiplies

    expect(received).toBe(expected)

Tests:       1 failed, 4 passed, 5 total
`;

const rerun = (command: string, log: string, ids: string[], report = false) =>
  selectiveRerun(command, { log, ids, report })?.command ?? null;

describe('the selective rerun command', () => {
  it('pytest: node ids in place of the paths given, options and their values kept', () => {
    const ids = ['tests/test_calc.py::test_add', 'tests/test_calc.py::test_div[0-1]'];
    expect(rerun('python3 -m pytest -q -p no:cacheprovider tests/', PYTEST_LOG, ids)).toBe(
      "python3 -m pytest -q -p no:cacheprovider tests/test_calc.py::test_add 'tests/test_calc.py::test_div[0-1]'",
    );
    expect(rerun('uv run pytest --junitxml=test-report.xml', PYTEST_LOG, ids)).toBe(
      "uv run pytest --junitxml=test-report.xml tests/test_calc.py::test_add 'tests/test_calc.py::test_div[0-1]'",
    );
    // A JUnit report's classname does not say where the file ends: the rubric runs whole.
    expect(rerun('pytest --junitxml=r.xml', PYTEST_LOG, ['tests.test_calc::test_add'], true)).toBeNull();
  });

  it('go test: the failing top-level tests, by -run, never cached; per package when the report names them', () => {
    expect(rerun('go test -v ./...', GO_LOG, ['TestAdd', 'TestTable/case_1'])).toBe(
      "go test -v ./... -run '^(TestAdd|TestTable)$' -count=1",
    );
    const report = ['example.com/calc::TestAdd', 'example.com/calc/sub::TestX'];
    expect(rerun('go test -json ./... > test-report.jsonl', '', report, true)).toBe(
      "go test -json example.com/calc example.com/calc/sub -run '^(TestAdd|TestX)$' -count=1 > test-report.jsonl",
    );
    expect(rerun('go test ./...', GO_LOG, ['TestAdd', 'weird name'])).toBeNull();
  });

  it('cargo test: exact filters after --, the name filter given dropped', () => {
    expect(rerun('cargo test adds --release', CARGO_LOG, ['tests::adds'])).toBe(
      'cargo test --release -- --exact tests::adds',
    );
    expect(rerun('cargo test -- --nocapture', CARGO_LOG, ['tests::adds'])).toBe(
      'cargo test -- --nocapture --exact tests::adds',
    );
  });

  it('vitest: the failing files, its subcommand kept, also through npm test (after npm --)', () => {
    const ids = ['src/math.test.ts > math > multiplies'];
    expect(rerun('npx vitest run src --reporter=verbose', VITEST_LOG, ids)).toBe(
      'npx vitest run --reporter=verbose src/math.test.ts',
    );
    expect(rerun('npm test', VITEST_LOG, ids)).toBe('npm test -- src/math.test.ts');
    expect(rerun('npm run test:unit -- --coverage', VITEST_LOG, ids)).toBe(
      'npm run test:unit -- --coverage src/math.test.ts',
    );
    expect(rerun('pnpm test', VITEST_LOG, ids)).toBe('pnpm test src/math.test.ts');
    // Report ids: `file::suite > test`.
    expect(rerun('vitest run', '', ['src/a.test.ts::a > works'], true)).toBe('vitest run src/a.test.ts');
  });

  it('mocha and jest: by full name, exactly, as an escaped regular expression', () => {
    expect(rerun('npx mocha --reporter spec', MOCHA_LOG, ['greet says hello'])).toBe(
      "npx mocha --reporter spec --grep '^(?:greet says hello)$'",
    );
    expect(rerun('npx jest --ci', JEST_LOG, ['math › multiplies (x2)'])).toBe(
      "npx jest --ci -t '^(?:math multiplies \\(x2\\))$'",
    );
  });

  it('a package script is only read as a runner whose output it printed', () => {
    expect(rerun('npm test', PYTEST_LOG, ['tests/test_calc.py::test_add'])).toBeNull();
  });

  it('earlier setup steps stay, checks and builds go; what the shell would expand is never rewritten', () => {
    const ids = ['tests/test_calc.py::test_add'];
    expect(rerun('cd py && npx prettier --check . && pytest', PYTEST_LOG, ids)).toBe(
      'cd py && pytest tests/test_calc.py::test_add',
    );
    for (const cmd of [
      'pytest; true',
      'pytest | tee out',
      'pytest || true',
      'pytest $ARGS',
      'pytest "$(echo x)"',
      'pytest `x`',
      'pytest tests/*.py',
      'pytest \\\n -q',
      '(pytest)',
      'pytest < in',
      'pytest # a comment',
      'make test',
    ]) {
      expect(rerun(cmd, PYTEST_LOG, ids), cmd).toBeNull();
    }
  });

  it('an ID that is not one plain argument (an option, a control character) runs the rubric whole; past the caps too', () => {
    expect(rerun('pytest', PYTEST_LOG, ['-p evil::x'])).toBeNull();
    expect(rerun('pytest', PYTEST_LOG, ['t.py::a\u0007'])).toBeNull();
    const many = Array.from({ length: 101 }, (_, i) => `t.py::test_${i}`);
    expect(rerun('pytest', PYTEST_LOG, many)).toBeNull();
    expect(rerun('pytest', PYTEST_LOG, [`t.py::${'x'.repeat(17_000)}`])).toBeNull();
  });

  it('a hostile test name is passed as those characters: the rerun command runs nothing else (real bash)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chalk-rerun-'));
    try {
      const hostile = [
        `t.py::$(touch ${dir}/a)`,
        `t.py::\`touch ${dir}/b\``,
        `t.py::'; touch ${dir}/c; '`,
        `t.py::x" && touch ${dir}/d && "`,
        `t.py::\\'$(touch ${dir}/e)`,
      ];
      for (const id of hostile) {
        const command = rerun('pytest -q', PYTEST_LOG, [id]);
        expect(command, id).not.toBeNull();
        // `pytest` is a function that prints its arguments, one per line.
        const out = spawnSync('bash', ['-c', `pytest() { printf '%s\\n' "$@"; }; ${command}`], { encoding: 'utf8' });
        expect(out.stdout.split('\n').slice(0, 2)).toEqual(['-q', id]);
      }
      const mocha = rerun('npx mocha', MOCHA_LOG, [`greet $(touch ${dir}/f) '; touch ${dir}/g; '`]) as string;
      spawnSync('bash', ['-c', `npx() { :; }; ${mocha}`]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the words of the small part of the shell it understands', () => {
    expect(commandWords(`FOO=1 pytest -k 'not slow' "tests/a b" 2>&1 > out.txt`)).toEqual([
      [
        { value: 'FOO=1', raw: 'FOO=1', redirect: false },
        { value: 'pytest', raw: 'pytest', redirect: false },
        { value: '-k', raw: '-k', redirect: false },
        { value: 'not slow', raw: "'not slow'", redirect: false },
        { value: 'tests/a b', raw: '"tests/a b"', redirect: false },
        { value: '2>&1', raw: '2>&1', redirect: true },
        { value: '>', raw: '>', redirect: true },
        { value: 'out.txt', raw: 'out.txt', redirect: true },
      ],
    ]);
    expect(commandWords('a && && b')).toBeNull();
    expect(commandWords('a >')).toBeNull();
    expect(commandWords("a 'unterminated")).toBeNull();
  });
});
