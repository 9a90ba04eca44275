import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { chalk, e2eAvailable, explain, makeScenario, type Rig, type Scenario, startRig, tick } from './harness.js';

/**
 * Fingerprints from a JavaScript rubric with no report configured, end to end
 * (real CLI, real container, scripted model), with Node's own runner: `node
 * --test` and the spec reporter, which needs nothing installed in the sandbox.
 * mocha and pytest as rubrics are in fingerprint-real-runners.test.ts. The
 * tests come before the code, so the base fails them: CHALK_BASELINE=off (the
 * base check has tests of its own, base-and-rerun.test.ts).
 */
const available = await e2eAvailable();

const RUBRIC = 'node --test --test-reporter=spec test/';
const GREET_TEST = `const test = require('node:test');
const assert = require('node:assert');
const { greet } = require('../greet.js');
test('greet says hello', () => { assert.strictEqual(greet(), 'hello'); });
test('greet is a function', () => { assert.strictEqual(typeof greet, 'function'); });
`;
/** Fails on odd runs, passes on even ones: the run count lives in .git, outside every tree. */
const FLAKY_TEST = `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('fetch survives the network', () => {
  const f = '.git/fetch-runs';
  const n = Number(fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '0') + 1;
  fs.writeFileSync(f, String(n));
  assert.ok(n % 2 === 0, 'connection reset on run ' + n);
});
`;

interface FpRow {
  kind: string;
  rubric_exit: number;
  verdict: string | null;
  failing_tests: string | null;
  first_error: string | null;
  flaky_tests: string | null;
  tree_id: string | null;
}
const rows = (rig: Rig, sc: Scenario) =>
  rig.sql<FpRow>(
    'SELECT kind, rubric_exit, verdict, failing_tests, first_error, flaky_tests, tree_id FROM runs WHERE repo = $1 AND ticket = $2 ORDER BY id',
    [sc.repo, sc.ticket],
  );

const writeGreet = (body: string) => s.write('/work/repo/greet.js', `module.exports = { greet: () => ${body} };\n`);

describe.skipIf(!available)('fingerprints from node --test, end to end', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('records the failing test and a specific first error; the same failure again is a repeat', async () => {
    const sc = makeScenario({ checkpoints: 1, files: { 'test/greet.test.js': GREET_TEST } });
    rig.script({
      loops: [
        [writeGreet("'nope'"), tick(sc.ticket), s.loopDone('1', 'added greet.js')],
        [writeGreet("'nope'"), s.loopDone('1', 'greet.js is there')],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: { CHALK_SPEC_CHECK: 'false', CHALK_BASELINE: 'off', CHALK_FP_RULES: 'on', CHALK_TEST_CMD: RUBRIC },
    });
    expect(r.code, explain(r)).toBe(3);
    expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual(['DETENTION: repeat: rubric failed (exit 1)']);
    const got = await rows(rig, sc);
    expect(got.map((c) => [c.kind, c.rubric_exit, c.verdict, c.failing_tests, c.flaky_tests])).toEqual([
      ['continue', 1, 'first', 'greet says hello', null],
      ['retry', 1, 'repeat', 'greet says hello', null],
    ]);
    expect(got[0]?.first_error).toMatch(/^AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal/);
    expect(got[1]?.first_error).toBe(got[0]?.first_error);
    expect(got[1]?.tree_id).toBe(got[0]?.tree_id);
    // The failing test fails again on the second run: nothing is flaky.
    expect(r.stdout).toContain('no test is flaky');
    sc.dispose();
  });

  it('a test that fails then passes on the same tree is recorded as flaky, and the retry is no repeat', async () => {
    const sc = makeScenario({ checkpoints: 1, files: { 'test/fetch.test.js': FLAKY_TEST } });
    rig.script({
      loops: [
        [s.write('/work/repo/fetch.js', 'module.exports = {};\n'), tick(sc.ticket), s.loopDone('1', 'added fetch.js')],
        [s.loopDone('1', 'nothing to change')],
      ],
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_SPEC_CHECK: 'false',
        CHALK_BASELINE: 'off',
        CHALK_FP_RULES: 'shadow',
        CHALK_MAX_RETRIES: '1',
        CHALK_TEST_CMD: RUBRIC,
      },
    });
    expect(r.code, explain(r)).toBe(3);
    const got = await rows(rig, sc);
    expect(got.map((c) => [c.kind, c.rubric_exit, c.failing_tests, c.first_error, c.flaky_tests])).toEqual([
      ['continue', 1, null, null, 'fetch survives the network'],
      ['retry', 1, null, null, 'fetch survives the network'],
    ]);
    expect(got[1]?.verdict).not.toBe('repeat');
    expect(r.stdout).toContain('flaky, left out of the fingerprint: fetch survives the network');
    sc.dispose();
  });
});
