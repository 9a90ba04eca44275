import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  chalk,
  e2eAvailable,
  explain,
  IMAGE,
  makeScenario,
  type Rig,
  type Scenario,
  startRig,
  tick,
} from './harness.js';

/**
 * Fingerprints from the real mocha and pytest, end to end (real CLI, real
 * container, scripted model), with no CHALK_TEST_REPORT: the failing test IDs
 * and the first error come from the runners' console output alone, and the
 * same failure on the next loop is judged `repeat`. mocha is installed by
 * CHALK_SETUP_CMD from the npm registry inside the sandbox (11.7.6, not the
 * fixtures' 12.0.3: mocha 12 needs Node ^20.19 || >=22.12 and the sandbox image
 * has Node 18.20.4, whose assert prints a diff header where Node 22 prints
 * `'nope' !== 'hello'`); pytest runs in an
 * image derived from the test image with Debian's python3-pytest.
 */
const available = await e2eAvailable();

interface FpRow {
  kind: string;
  rubric_exit: number;
  verdict: string | null;
  failing_tests: string | null;
  first_error: string | null;
}
const rows = (rig: Rig, sc: Scenario) =>
  rig.sql<FpRow>(
    'SELECT kind, rubric_exit, verdict, failing_tests, first_error FROM runs WHERE repo = $1 AND ticket = $2 ORDER BY id',
    [sc.repo, sc.ticket],
  );

const MOCHA_PACKAGE = `${JSON.stringify(
  { name: 'greet', version: '1.0.0', private: true, devDependencies: { mocha: '11.7.6' } },
  null,
  2,
)}\n`;
const MOCHA_TEST = `const assert = require('node:assert');
const { greet } = require('../greet.js');
describe('greet', () => {
  it('says hello', () => { assert.strictEqual(greet(), 'hello'); });
  it('is a function', () => { assert.strictEqual(typeof greet, 'function'); });
});
`;
const PYTEST_TEST = `from greet import greet


def test_says_hello():
    assert greet() == "hello"


def test_is_callable():
    assert callable(greet)
`;

/** The derived image's recipe; its hash (with the base image's id) labels the image so a stale one is rebuilt. */
const PYTEST_IMAGE = 'chalk-sandbox-pytest:test';
const pytestDockerfile = (base: string) => `FROM ${base}
USER root
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 python3-pytest \\
 && rm -rf /var/lib/apt/lists/*
USER chalk
`;

function docker(args: string[], cwd?: string): { code: number; out: string } {
  const r = spawnSync('docker', args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status ?? -1, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function ensurePytestImage(): void {
  const baseId = docker(['image', 'inspect', '--format', '{{.Id}}', IMAGE]).out.trim();
  const recipe = pytestDockerfile(IMAGE);
  const label = createHash('sha256').update(`${baseId}\n${recipe}`).digest('hex');
  const have = docker(['image', 'inspect', '--format', '{{index .Config.Labels "chalk.test-recipe"}}', PYTEST_IMAGE]);
  if (have.code === 0 && have.out.trim() === label) return;
  const dir = mkdtempSync(join(tmpdir(), 'chalk-pytest-image-'));
  try {
    writeFileSync(join(dir, 'Dockerfile'), recipe);
    const built = docker(['build', '-q', '--label', `chalk.test-recipe=${label}`, '-t', PYTEST_IMAGE, '.'], dir);
    if (built.code !== 0) throw new Error(`docker build ${PYTEST_IMAGE} failed:\n${built.out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const twoSameLoops = (sc: Scenario, write: s.Step): s.Script[] => [
  [write, tick(sc.ticket), s.loopDone('1', 'added greet')],
  [write, s.loopDone('1', 'greet is there')],
];

describe.skipIf(!available)('fingerprints from real mocha and pytest, end to end', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('mocha (spec reporter, colour forced): the failing test and its AssertionError; the same failure again is a repeat', async () => {
    const sc = makeScenario({
      checkpoints: 1,
      files: { 'package.json': MOCHA_PACKAGE, 'test/greet.test.js': MOCHA_TEST, '.gitignore': 'node_modules/\n' },
    });
    rig.script({
      loops: twoSameLoops(sc, s.write('/work/repo/greet.js', "module.exports = { greet: () => 'nope' };\n")),
    });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_SPEC_CHECK: 'false',
        // The tests come before the code: the base fails them (base-and-rerun.test.ts checks bases).
        CHALK_BASELINE: 'off',
        CHALK_FP_RULES: 'on',
        CHALK_MAX_RETRIES: '1',
        CHALK_SETUP_CMD: 'npm install --no-audit --no-fund',
        CHALK_TEST_CMD: 'npx mocha --reporter spec --color',
      },
    });
    expect(r.code, explain(r)).toBe(3);
    expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual(['DETENTION: repeat: rubric failed (exit 1)']);
    const got = await rows(rig, sc);
    // Node 18's assert prints a diff header, then the two values: the first error carries the values.
    const first = "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: + 'nope' - 'hello'";
    expect(got.map((c) => [c.kind, c.rubric_exit, c.verdict, c.failing_tests, c.first_error])).toEqual([
      ['continue', 1, 'first', 'greet says hello', first],
      ['retry', 1, 'repeat', 'greet says hello', first],
    ]);
    sc.dispose();
  });

  it('pytest -q: the failing test ID and its E line; the same failure again is a repeat', async () => {
    ensurePytestImage();
    const sc = makeScenario({
      checkpoints: 1,
      files: { 'test_greet.py': PYTEST_TEST, '.gitignore': '__pycache__/\n.pytest_cache/\n' },
    });
    rig.script({ loops: twoSameLoops(sc, s.write('/work/repo/greet.py', 'def greet():\n    return "nope"\n')) });
    const r = await chalk(rig, sc, ['run'], {
      env: {
        CHALK_IMAGE: PYTEST_IMAGE,
        CHALK_SPEC_CHECK: 'false',
        // The tests come before the code: the base fails them (base-and-rerun.test.ts checks bases).
        CHALK_BASELINE: 'off',
        CHALK_FP_RULES: 'on',
        CHALK_MAX_RETRIES: '1',
        CHALK_TEST_CMD: 'python3 -m pytest -q',
      },
    });
    expect(r.code, explain(r)).toBe(3);
    expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual(['DETENTION: repeat: rubric failed (exit 1)']);
    const got = await rows(rig, sc);
    const first = "E AssertionError: assert 'nope' == 'hello'";
    expect(got.map((c) => [c.kind, c.rubric_exit, c.verdict, c.failing_tests, c.first_error])).toEqual([
      ['continue', 1, 'first', 'test_greet.py::test_says_hello', first],
      ['retry', 1, 'repeat', 'test_greet.py::test_says_hello', first],
    ]);
    sc.dispose();
  });
});
