import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { calls, chalk, e2eAvailable, explain, makeScenario, type Rig, readIo, startRig, tick } from './harness.js';

/**
 * A repository as it is, end to end (the built CLI, the real sandbox, the real
 * `claude` CLI against the scripted model, the fake forge): a CI-style shallow
 * clone whose base fails a test. The base is judged before any agent call: a
 * missing toolchain command is the environment's failure, a red base stops
 * with one line, and CHALK_BASELINE=known takes its failure as the baseline
 * through a detention, `chalk why` and office hours to a request that names
 * it. The rubric writes a report and coverage and tidies a file, and none of
 * that reaches the pushed branch. Then a flaky test is rerun by itself.
 */
const available = await e2eAvailable();

/**
 * The rubric: every tests/*_test.sh must pass, each failure's output on the
 * line after it. Like a real test run it writes a JUnit report and coverage
 * beside the code (neither ignored) and tidies deps.lock (sorts it, as `go
 * mod tidy` rewrites go.mod).
 */
const CHECK = `#!/bin/sh
status=0; cases=''
for t in tests/*_test.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  if out=$(sh "$t" 2>&1); then echo "ok $t"; cases="$cases<testcase classname='tests' name='$name'/>"
  else echo "FAIL $t"; echo "  $out"; status=1
    cases="$cases<testcase classname='tests' name='$name'><failure message='failed'/></testcase>"
  fi
done
printf '<?xml version="1.0"?>\\n<testsuites><testsuite name="shop">%s</testsuite></testsuites>\\n' "$cases" > test-report.xml
echo "tests: $(ls tests | wc -l)" > coverage.txt
sort -o deps.lock deps.lock
exit $status
`;
const BASE_FAILURE = 'tests::broken_test';

/** A loop that runs the rubric itself, adds greet.sh with its test, a new failing test, and its own deps.lock; no tick. */
const strayLoop = (): s.Script => [
  s.bash('sh check.sh > /dev/null || true'),
  s.write('/work/repo/greet.sh', 'echo hello\n'),
  s.write('/work/repo/tests/greet_test.sh', '[ "$(sh greet.sh)" = "hello" ]\n'),
  s.write('/work/repo/tests/new_test.sh', 'echo "AssertionError: new is not ok"; exit 1\n'),
  s.write('/work/repo/deps.lock', 'b\na\nc\n'),
  s.loopDone('1', 'added greet.sh'),
];

describe.skipIf(!available)('a repository as it is, end to end', { timeout: 400_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('a shallow clone with a red base: environment at once, red base, then CHALK_BASELINE=known to a request naming it, nothing the rubric wrote pushed', async () => {
    const sc = makeScenario({
      checkpoints: 1,
      shallow: { history: 3 },
      files: {
        'check.sh': CHECK,
        'deps.lock': 'b\na\n',
        'tests/broken_test.sh': 'exit 1\n',
        '.gitignore': 'node_modules/\n',
      },
    });
    expect(sc.git('rev-parse', '--is-shallow-repository')).toBe('true');
    const env = { CHALK_SPEC_CHECK: 'false', CHALK_TEST_REPORT: 'test-report.xml' };
    rig.script({});

    // A toolchain the image lacks: said at once, no agent call, not the agent's fault.
    const go = await chalk(rig, sc, ['run'], { env: { ...env, CHALK_TEST_CMD: 'go test ./...' } });
    expect(go.code, explain(go)).toBe(7);
    expect(go.lines).toContain(
      "the rubric cannot start: 'go' is not in the sandbox (bash: line 1: go: command not found, exit 127); nothing was asked of the agent. Next: put 'go' in the sandbox image (the toolchain that has it, or CHALK_IMAGE), then run: chalk doctor",
    );

    // The base fails a test: one line, the test and the two ways on; still no agent call.
    const red = await chalk(rig, sc, ['run'], { env });
    expect(red.code, explain(red)).toBe(6);
    const line = red.lines.find((l) => l.includes('is red before any agent call')) ?? '';
    expect(line).toMatch(
      new RegExp(
        `^the base [0-9a-f]{12} is red before any agent call: 1 test fail \\(${BASE_FAILURE}\\); fix the base branch, or set CHALK_BASELINE=known`,
      ),
    );
    expect(rig.seen).toEqual([]);

    // Known: the loop adds a failing test to the base's, and is detained saying which.
    rig.script({ loops: [strayLoop()] });
    const known = { ...env, CHALK_BASELINE: 'known' };
    const detained = await chalk(rig, sc, ['run'], { env: { ...known, CHALK_MAX_RETRIES: '0' } });
    expect(detained.code, explain(detained)).toBe(3);
    expect(detained.lines).toContain(
      `base ${line.slice(9, 21)}: 1 failing test taken as the baseline (CHALK_BASELINE=known, cached): ${BASE_FAILURE}; a loop is green when it adds none`,
    );
    expect(detained.lines).toContain(
      "DETENTION: rubric failed (exit 1), adding 1 failing test to the base's: tests::new_test",
    );
    expect(detained.lines.find((l) => l.startsWith('loop 1 (continue): '))).toMatch(
      /^loop 1 \(continue\): agent ok \(\$\d+\.\d\d, \d+s\), rubric exit 1 in \d+s\./,
    );
    // chalk why prints the recorded first error, and with CHALK_DECIDER=off warns of no decider.
    const why = await chalk(rig, sc, ['why']);
    expect(why.code, explain(why)).toBe(0);
    expect(why.stdout).toContain('  first error: AssertionError: new is not ok\n');
    expect(why.stderr).toBe('');

    // Office hours: the person drops the stray test; the loop goes on, green against the baseline.
    const [detention] = sc.branches('detention/');
    sc.git('switch', '--quiet', detention as string);
    sc.git('rm', '--quiet', 'tests/new_test.sh');
    sc.git('commit', '--quiet', '-m', 'the new test was not asked for');
    rig.script({ loops: [[tick(sc.ticket), s.loopDone('1', 'ticked greet')]] });
    const oh = await chalk(rig, sc, ['office-hours', '-m', 'tests/new_test.sh was not asked for'], { env: known });
    expect(oh.code, explain(oh)).toBe(0);
    expect(rig.model.violations).toEqual([]);
    expect(oh.lines.some((l) => l.includes('taken as the baseline (CHALK_BASELINE=known, cached)'))).toBe(true);
    const review = rig.seen.find((x) => x.kind === 'review');
    expect(review?.prompt).toContain('<failing_before>');
    expect(review?.prompt).toContain(BASE_FAILURE);
    const [request] = sc.forge.requests();
    expect(request?.stdin).toContain(
      `adds no failing test in the sandbox. Failing before this change, on the base branch (CHALK_BASELINE=known): \`${BASE_FAILURE}\``,
    );

    // Pushed from the shallow clone: the agent's work, not the rubric's report, coverage or tidying.
    const [tutoring] = sc.branches('tutoring/');
    const pushed = sc.git('--git-dir', sc.origin, 'ls-tree', '-r', '--name-only', tutoring as string).split('\n');
    expect(pushed).toEqual(expect.arrayContaining(['greet.sh', 'tests/greet_test.sh', 'deps.lock']));
    expect(pushed).not.toContain('test-report.xml');
    expect(pushed).not.toContain('coverage.txt');
    expect(sc.git('--git-dir', sc.origin, 'show', `${tutoring}:deps.lock`)).toBe('b\na\nc');
    expect((await calls(rig, sc)).map((c) => [c.kind, c.rubric_exit, c.progressed])).toEqual([
      ['continue', 1, false],
      ['continue', 1, true],
      ['review', 0, false],
    ]);
    sc.dispose();
  });

  it('a flaky test is rerun by itself: only it runs again, its hostile name passed as words, and the loop line says so', async () => {
    const title = "fetches $(touch /tmp/chalk-pwned) '; touch /tmp/chalk-pwned; '";
    const flaky = `const fs = require('node:fs');
const assert = require('node:assert');
describe('net', () => {
  it(${JSON.stringify(title)}, () => {
    const f = '/tmp/chalk-flaky-runs';
    const n = Number(fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '0') + 1;
    fs.writeFileSync(f, String(n));
    assert.ok(!fs.existsSync('/tmp/chalk-pwned'), 'a command in a test name ran');
    assert.ok(n !== 1, 'connection reset on run ' + n);
  });
});
`;
    const sc = makeScenario({
      checkpoints: 1,
      files: {
        'package.json': `${JSON.stringify({ name: 'greet', private: true, devDependencies: { mocha: '11.7.6' } })}\n`,
        'greet.js': "module.exports = { greet: () => 'hello' };\n",
        'test/greet.test.js': `const assert = require('node:assert');
const { greet } = require('../greet.js');
describe('greet', () => { it('says hello', () => { assert.strictEqual(greet(), 'hello'); }); });
`,
        '.gitignore': 'node_modules/\n',
      },
    });
    rig.script({
      loops: [
        [s.write('/work/repo/test/net.test.js', flaky), s.loopDone('1', 'added the network test')],
        [tick(sc.ticket), s.loopDone('1', 'the network test passes')],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_SPEC_CHECK: 'false',
        CHALK_REVIEW: 'false',
        CHALK_AUTO_MR: 'false',
        CHALK_SETUP_CMD: 'npm install --no-audit --no-fund',
        CHALK_TEST_CMD: 'npx mocha --reporter spec',
      },
    });
    expect(r.code, explain(r)).toBe(0);
    const id = `net ${title}`;
    const again = r.lines.find((l) => l.startsWith('rubric run again on the same tree')) ?? '';
    expect(again).toContain(
      "only the 1 failing test (mocha: npx mocha --reporter spec --grep '^(?:net fetches \\$\\(touch",
    );
    expect(again).toContain(`flaky, left out of the fingerprint: ${id}`);
    expect(r.lines.find((l) => l.startsWith('loop 1 (continue): '))).toMatch(
      /rubric exit 1 in \d+s, flaky: net fetches \$\(touch/,
    );
    // The rerun ran the one test, not the suite.
    const rerun = readIo(rig, sc, 'rubric-rerun.log');
    expect(rerun).toContain('1 passing');
    expect(rerun).not.toContain('says hello');
    const rows = await rig.sql<{ flaky_tests: string | null }>(
      'SELECT flaky_tests FROM runs WHERE repo = $1 AND ticket = $2 ORDER BY id',
      [sc.repo, sc.ticket],
    );
    expect(rows.map((x) => x.flaky_tests)).toEqual([id, null]);
    sc.dispose();
  });
});
