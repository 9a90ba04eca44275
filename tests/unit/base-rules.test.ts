import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { environmentFailure, missingCommand } from '../../core/fingerprint/environment.js';
import { nextStep } from '../../core/run/base/detention-reasons.js';
import { loopLine } from '../../core/run/base/record.js';
import {
  type BaseResult,
  beyondBase,
  chalkFilesIn,
  environmentLine,
  judgeBase,
  redBaseLine,
} from '../../core/run/loop/base-rules.js';
import { CACHE_ENTRIES, cacheKey, readBaseCache, writeBaseCache } from '../../core/run/loop/baseline-cache.js';
import { tempDir } from '../helpers/cli.js';

const COMMIT = 'c0ffee'.repeat(7).slice(0, 40);
const red = (o: Partial<BaseResult> = {}): BaseResult => ({
  exitCode: 1,
  tests: ['tests/t.py::test_a'],
  firstError: 'E assert 1 == 2',
  environment: null,
  chalkFiles: [],
  stopped: null,
  made: ['test-report.xml'],
  ...o,
});

describe('a rubric that cannot start', () => {
  it.each([
    ['bash: line 1: go: command not found', 127, 'go'],
    ['run.sh: line 3: cargo: command not found', 127, 'cargo'],
    ['sh: 1: vitest: not found', 127, 'vitest'],
    ['/bin/sh: 1: jest: not found', 1, 'jest'],
    ['bash: ./check.sh: Permission denied', 126, './check.sh'],
    ['bash: line 1: ./run-tests: No such file or directory', 127, './run-tests'],
    ["/usr/bin/env: 'python': No such file or directory", 127, 'python'],
    ['/usr/bin/env: ‘node’: No such file or directory', 127, 'node'],
    ['make: go: No such file or directory', 2, 'go'],
    ['make[1]: pytest: Command not found', 2, 'pytest'],
  ])('%s (exit %i) names %s', (line, exitCode, command) => {
    expect(
      environmentFailure({ exitCode, log: `npm run test\n${line}\nmake: *** [test] Error 127\n`, tests: null }),
    ).toEqual({
      command,
      line,
      exitCode,
    });
  });

  it('exit 126 or 127 with nothing said is one too, naming no command; a hostile name is not shown', () => {
    expect(environmentFailure({ exitCode: 127, log: 'nothing useful\n', tests: null })).toEqual({
      command: null,
      line: '',
      exitCode: 127,
    });
    const hostile = 'bash: $(rm$' + '{IFS}-rf)';
    expect(missingCommand(`${hostile}\u001b[2J: command not found\n`)).toEqual({
      command: null,
      line: `${hostile}: command not found`,
    });
  });

  it('is never a run that named failing tests, a pass, nor an ordinary failure', () => {
    const log = 'bash: line 1: go: command not found\nFAILED t.py::test_a - x\n';
    expect(environmentFailure({ exitCode: 127, log, tests: ['t.py::test_a'] })).toBeNull();
    expect(environmentFailure({ exitCode: 0, log, tests: null })).toBeNull();
    expect(
      environmentFailure({ exitCode: 1, log: 'AssertionError: go: command not found is expected\n', tests: null }),
    ).toBeNull();
  });
});

describe('the base, judged', () => {
  it('green passes; red stops unless known takes its failing tests; the environment and a stopped rubric always stop', () => {
    expect(judgeBase(red({ exitCode: 0, tests: null }), 'check')).toEqual({ kind: 'green' });
    expect(judgeBase(red(), 'check')).toEqual({ kind: 'red' });
    expect(judgeBase(red(), 'known')).toEqual({ kind: 'known', failures: ['tests/t.py::test_a'] });
    expect(judgeBase(red({ tests: null }), 'known')).toEqual({ kind: 'red' });
    expect(judgeBase(red({ stopped: 'timeout', exitCode: 124 }), 'known')).toEqual({ kind: 'red' });
    expect(judgeBase(red({ exitCode: 0, stopped: 'capped' }), 'check')).toEqual({ kind: 'red' });
    const environment = { command: 'go', line: 'bash: go: command not found', exitCode: 127 };
    expect(judgeBase(red({ tests: null, environment }), 'known')).toEqual({
      kind: 'environment',
      failure: environment,
    });
  });

  it('says one line: the failing tests and the two ways on, or why known cannot help', () => {
    const many = Array.from({ length: 7 }, (_, i) => `t::test_${i}`);
    expect(redBaseLine(red({ tests: many }), COMMIT)).toBe(
      `the base ${COMMIT.slice(0, 12)} is red before any agent call: 7 tests fail (t::test_0, t::test_1, t::test_2, t::test_3, t::test_4 and 2 more); fix the base branch, or set CHALK_BASELINE=known to take these failures as the baseline (a loop is then green when it adds no failing test)`,
    );
    expect(redBaseLine(red({ tests: null }), COMMIT)).toMatch(
      /fails \(exit 1\) naming no test Chalk can read, first error: E assert 1 == 2; fix the base branch \(CHALK_BASELINE=known needs the failing tests' IDs: set CHALK_TEST_REPORT, see chalk doctor\)$/,
    );
    expect(redBaseLine(red({ stopped: 'timeout', exitCode: 124 }), COMMIT)).toContain('CHALK_RUBRIC_TIMEOUT');
    expect(redBaseLine(red({ tests: null, chalkFiles: ['CLAUDE.md'] }), COMMIT)).toMatch(
      /the rubric fails \(exit 1\) on Chalk's own CLAUDE\.md, which the repository's checks refuse; make it pass them \(e\.g\. run the repository's formatter on CLAUDE\.md\) and commit that to the base branch$/,
    );
    expect(redBaseLine(red({ chalkFiles: ['CLAUDE.md'] }), COMMIT)).toContain(
      "(its output also names Chalk's own CLAUDE.md)",
    );
  });

  it("finds Chalk's own files in a failing check's output, and only those", () => {
    const log = [
      'Checking formatting...',
      '[warn] CLAUDE.md',
      '[warn] docs/CLAUDE.md',
      '/work/repo/.chalk/textbook.md:3 MD022/blanks-around-headings',
      './specs/SHOP-1.md:1:1 MD041',
      'src/AGENTS.mdx',
      '.github/workflows/chalk.yml: line too long',
    ].join('\n');
    expect(chalkFilesIn(log, ['.github/workflows/chalk.yml', '.gitlab-ci.yml'])).toEqual([
      'CLAUDE.md',
      '.chalk/textbook.md',
      'specs/SHOP-1.md',
      '.github/workflows/chalk.yml',
    ]);
  });

  it('a rubric that cannot start names the command and where to add it', () => {
    const line = environmentLine(
      { command: 'go', line: 'bash: line 1: go: command not found', exitCode: 127 },
      '/x/base.log',
    );
    expect(line).toBe(
      "the rubric cannot start: 'go' is not in the sandbox (bash: line 1: go: command not found, exit 127); nothing was asked of the agent. Next: put 'go' in the sandbox image (the toolchain that has it, or CHALK_IMAGE), then run: chalk doctor",
    );
    expect(
      nextStep({
        kind: 'environment',
        io: '/io',
        maxRetries: 2,
        maxLoops: 20,
        reviewRounds: 1,
        budgetUsd: 1,
        command: null,
      }),
    ).toBe('read /io/rubric.log, and check that CHALK_TEST_CMD can run in the sandbox image (chalk doctor)');
  });

  it('a loop adds what the base did not fail; unknown tests compare with nothing', () => {
    expect(beyondBase(['a', 'b'], ['b', 'c'])).toEqual(['c']);
    expect(beyondBase(['a', 'b'], ['a'])).toEqual([]);
    expect(beyondBase(['a'], null)).toBeNull();
  });

  it("the loop line shows the agent's and the rubric's times apart, and a missing command instead of unknown tests", () => {
    const environment = { command: 'go', line: 'bash: go: command not found', exitCode: 127 };
    expect(
      loopLine({
        loop: 2,
        mode: 'retry',
        result: { costUsd: 0.42 },
        agentMs: 48_200,
        row: { agentStatus: 'ok', rubricExit: 127, times: { rubricMs: 27_400 }, environment },
        summary: 'fixed it',
      }),
    ).toBe(
      'loop 2 (retry): agent ok ($0.42, 48s), rubric exit 127 in 27s, \'go\' is not in the sandbox (bash: go: command not found, exit 127). summary: "fixed it"',
    );
  });

  it('the loop line says how a limit ended the call or the rubric, and what a call without a result was counted at', () => {
    const ended = 'timed out after 60 s (CHALK_RUBRIC_TIMEOUT)';
    expect(
      loopLine({
        loop: 1,
        mode: 'continue',
        result: { costUsd: 0.1 },
        agentMs: 9_000,
        row: { agentStatus: 'ok', rubricExit: 124, rubricEnding: ended, times: { rubricMs: 60_400 } },
      }),
    ).toBe(`loop 1 (continue): agent ok ($0.10, 9s), rubric ${ended} (60s).`);
    expect(
      loopLine({
        loop: 3,
        mode: 'retry',
        result: { costUsd: 1, costUnknown: true, ending: 'timed out after 5 s (CHALK_AGENT_TIMEOUT)' },
        agentMs: 5_100,
        row: { agentStatus: 'error', rubricExit: 1, times: { rubricMs: 2_000 } },
      }),
    ).toBe(
      'loop 3 (retry): agent timed out after 5 s (CHALK_AGENT_TIMEOUT) (no result: counted as $1.00, 5s), rubric exit 1 in 2s.',
    );
  });
});

describe("the host's cache of the base's result", () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const key = cacheKey({ commit: COMMIT, image: 'sha256:1', rubric: 'pytest', setup: '', report: '' });

  it('keys by commit, image and commands; reads back what it wrote', () => {
    dir = join(tempDir(), 'baseline');
    expect(cacheKey({ commit: COMMIT, image: 'sha256:2', rubric: 'pytest', setup: '', report: '' })).not.toBe(key);
    expect(readBaseCache(dir, key, COMMIT)).toBeNull();
    expect(writeBaseCache(dir, key, COMMIT, red())).toBe(true);
    expect(readBaseCache(dir, key, COMMIT)).toEqual(red());
    // Another commit's key in the same file is no hit.
    expect(readBaseCache(dir, key, 'f'.repeat(40))).toBeNull();
  });

  it('takes nothing it did not check: a link, another shape, text over the caps', () => {
    dir = join(tempDir(), 'baseline');
    mkdirSync(dir);
    const file = join(dir, `${key}.json`);
    const target = join(dir, 'elsewhere.json');
    const planted = JSON.stringify({ v: 1, key, commit: COMMIT, result: red() });
    writeFileSync(target, planted);
    symlinkSync(target, file);
    expect(readBaseCache(dir, key, COMMIT)).toBeNull();
    rmSync(file);
    writeFileSync(file, JSON.stringify({ v: 1, key, commit: COMMIT, result: { ...red(), extra: 1 } }));
    expect(readBaseCache(dir, key, COMMIT)).toBeNull();
    writeFileSync(file, JSON.stringify({ v: 1, key, commit: COMMIT, result: red({ tests: ['x'.repeat(2001)] }) }));
    expect(readBaseCache(dir, key, COMMIT)).toBeNull();
    // What the sandbox said past the caps is not cached at all.
    expect(writeBaseCache(dir, key, COMMIT, red({ firstError: 'e'.repeat(3000) }))).toBe(false);
    // A link planted where the entry goes is replaced, never followed.
    rmSync(file);
    symlinkSync(target, file);
    expect(writeBaseCache(dir, key, COMMIT, red())).toBe(true);
    expect(readBaseCache(dir, key, COMMIT)).toEqual(red());
    expect(lstatSync(file).isFile()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(planted);
  });

  it(`keeps the newest ${CACHE_ENTRIES} entries`, () => {
    dir = join(tempDir(), 'baseline');
    for (let i = 0; i < CACHE_ENTRIES + 3; i++) {
      const k = cacheKey({ commit: COMMIT, image: String(i), rubric: '', setup: '', report: '' });
      writeBaseCache(dir, k, COMMIT, red());
      utimesSync(join(dir, `${k}.json`), 1000 + i, 1000 + i);
    }
    writeBaseCache(dir, key, COMMIT, red());
    expect(readdirSync(dir)).toHaveLength(CACHE_ENTRIES);
    expect(readBaseCache(dir, key, COMMIT)).not.toBeNull();
  });
});
