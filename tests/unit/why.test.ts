import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpDecider } from '../../core/decider-client/client.js';
import type { DecisionRecord } from '../../core/decision/record.js';
import { rubricStatements } from '../../core/decision/why/run-reader.js';
import { runWhy } from '../../core/decision/why/run-why.js';
import { runPaths } from '../../core/layout.js';
import { FakeDecider, type WireRequest } from '../fakes/decider-server.js';

const TICKET = 'SHOP-7';
const RUBRIC_LOG = `\u001b[1m============================= test session starts ==============================\u001b[0m
platform linux -- Python 3.12.3, pytest-8.3.2
collected 3 items

tests/test_app.py ..F                                                    [100%]

=================================== FAILURES ===================================
_________________________________ test_marker __________________________________
    def test_marker():
>       assert not Path("BROKEN").exists()
E       AssertionError: BROKEN exists
tests/test_app.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_app.py::test_marker - AssertionError: BROKEN exists
========================= 1 failed, 2 passed in 0.03s ==========================
`;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** A repository with a green commit and a detention branch, and the run directory a detained run leaves. */
function detainedRun(rubricLog = RUBRIC_LOG, extra: Record<string, unknown> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'chalk-why-'));
  const root = join(home, 'shop');
  mkdirSync(join(root, 'src'), { recursive: true });
  git(home, 'init', '-q', '-b', 'main', root);
  writeFileSync(join(root, 'src', 'app.py'), 'print("ok")\n');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'green');
  const green = git(root, 'rev-parse', 'HEAD');
  git(root, 'switch', '-q', '-c', 'detention/SHOP-7-1791171685');
  writeFileSync(join(root, 'src', 'app.py'), 'print("ok")\nopen("BROKEN", "w")\n');
  writeFileSync(join(root, 'BROKEN'), '');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'detention(SHOP-7): rubric failed (exit 1)');
  git(root, 'switch', '-q', 'main');
  const env = { XDG_STATE_HOME: join(home, 'state') };
  const paths = runPaths('shop', TICKET, env);
  mkdirSync(paths.io, { recursive: true });
  writeFileSync(paths.rubricLog, rubricLog);
  writeFileSync(
    paths.detention,
    JSON.stringify({
      reason: 'rubric failed (exit 1)',
      branch: 'detention/SHOP-7-1791171685',
      green,
      lesson: 'rubric failed (exit 1)\nE       AssertionError: BROKEN exists',
      lesson_id: 4,
      ...extra,
    }),
  );
  return { root, env, paths };
}

const DIGEST = /^(\S+) \((\w+)\): (.*)$/;
/** Runs every tool once in palette order, then finishes; selects what names the marker file. */
function policy(w: WireRequest) {
  const answers: Record<string, unknown> = {};
  const next = w.questions.next;
  if (next?.type === 'choice') {
    const offered = Object.keys(next.criteria);
    const chosen = offered.find((o) => o !== 'finish') ?? 'finish';
    answers.next = { type: 'choice', choice: chosen, confidence: 0.7 };
  }
  const state = JSON.parse(w.state) as { artifacts: string[] };
  for (const id of Object.keys(w.questions).filter((q) => q.startsWith('select_'))) {
    const line = state.artifacts.find((l) => DIGEST.exec(l)?.[1] === id.slice('select_'.length)) ?? '';
    const cause =
      /AssertionError: BROKEN exists|src\/app\.py/.test(line) && !/^\S+ \(statement\): rubric: FAILED/.test(line);
    answers[id] = { type: 'noul', noul: cause ? 0.93 : 0.08 };
  }
  return answers;
}

let fake: FakeDecider | null = null;
let decider: HttpDecider | null = null;
afterEach(async () => {
  await decider?.close();
  await fake?.stop();
  decider = null;
  fake = null;
});

/** `chalk why` for TICKET with the test's decider, collecting what it prints and warns. */
async function explain(root: string, env: NodeJS.ProcessEnv, decider: HttpDecider, mode?: string) {
  const out: string[] = [];
  const warn: string[] = [];
  const code = await runWhy({
    repo: 'shop',
    root,
    ticket: TICKET,
    decider,
    env,
    ...(mode ? { mode } : {}),
    out: (l) => out.push(l),
    warn: (l) => warn.push(l),
  });
  return { code, out, warn };
}

describe('chalk why', () => {
  it('explains a detention from the run directory with a protocol-checking decider, and records its decisions', async () => {
    const { root, env, paths } = detainedRun();
    const token = 'TOKEN-CANARY-why-3e7';
    fake = await new FakeDecider({
      token,
      script: (w) => ({ body: { model: 'why-fake-1', answers: policy(w) } }),
    }).start();
    decider = new HttpDecider({
      entry: { id: 'decider', url: fake.url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 1 } },
      token,
    });
    const { code, out, warn } = await explain(root, env, decider);
    expect(code).toBe(0);
    expect(warn).toEqual([]);
    expect(fake.violations).toEqual([]);
    expect(out[0]).toBe('SHOP-7 stopped: rubric failed (exit 1)');
    // In the order the statements came to be: the tools ran in palette order.
    expect(out.slice(1, -1)).toEqual([
      '  0.93  change: changed since the last green loop: src/app.py (+1 -0)',
      '  0.93  lesson: E AssertionError: BROKEN exists',
      '  0.93  rubric: E AssertionError: BROKEN exists',
    ]);
    // Every tool ran once, in palette order, then finish.
    const moves = fake.requests.map((r) =>
      r.questions.next?.type === 'choice' ? Object.keys(r.questions.next.criteria) : [],
    );
    expect(moves[0]).toEqual(['list_failing_tests', 'list_changed_files', 'read_open_lesson', 'split_rubric_log']);
    // The last turn had nothing left to run: finish is the only move, so only the selection is asked.
    expect(moves.at(-1)).toEqual([]);
    expect(Object.keys(fake.requests.at(-1)?.questions ?? {}).every((q) => q.startsWith('select_'))).toBe(true);
    const finalState = JSON.parse(fake.requests.at(-1)?.state ?? '{}') as { artifacts: string[]; done: string[] };
    expect(finalState.artifacts).toContain('statement3 (statement): test: test tests/test_app.py::test_marker failed');
    expect(finalState.done).toHaveLength(4);
    // The decisions are recorded in the run directory, one line per request.
    const jsonl = readFileSync(paths.decisions, 'utf8');
    expect(jsonl).not.toContain(token);
    expect(out.join('\n')).not.toContain(token);
    expect(fake.authHeaders.every((h) => h === `Bearer ${token}`)).toBe(true);
    const records = jsonl
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DecisionRecord);
    expect(records).toHaveLength(fake.requests.length);
    expect(records.every((r) => r.model === 'why-fake-1' && r.tags.kind === 'why' && r.failure === null)).toBe(true);
    expect(out.at(-1)).toBe(`(5 turns, ${records.length} decisions; recorded in ${paths.decisions})`);
  });

  it('goes on without an untrusted decider, says why once, and sends it nothing', async () => {
    const { root, env } = detainedRun();
    fake = await new FakeDecider().start();
    const url = `http://decider.example.test:${fake.port}`;
    const { untrustedReason } = await import('../../core/decision/trust.js');
    decider = new HttpDecider({
      entry: { id: 'decider', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 1 } },
      untrusted: () => untrustedReason(url, 'CHALK_DECIDER_URL', env),
    });
    const { code, out, warn } = await explain(root, env, decider);
    expect(code).toBe(1);
    expect(warn).toHaveLength(1);
    expect(warn[0]).toContain('chalk decider trust http://decider.example.test');
    expect(out).toEqual([
      'SHOP-7 stopped: rubric failed (exit 1)',
      '  failing: tests/test_app.py::test_marker',
      '  work parked on detention/SHOP-7-1791171685',
    ]);
    expect(fake.requests).toHaveLength(0);
    expect(fake.healthCalls).toBe(0);
  });

  it('says the failing tests are unknown when the failed rubric names none it can read', async () => {
    const { root, env } = detainedRun('make: *** [Makefile:3: test] Error 1\n');
    fake = await new FakeDecider().start();
    const url = `http://decider.example.test:${fake.port}`;
    const { untrustedReason } = await import('../../core/decision/trust.js');
    decider = new HttpDecider({
      entry: { id: 'decider', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 1 } },
      untrusted: () => untrustedReason(url, 'CHALK_DECIDER_URL', env),
    });
    const { out } = await explain(root, env, decider);
    expect(out).toEqual([
      'SHOP-7 stopped: rubric failed (exit 1)',
      '  failing tests: unknown (set CHALK_TEST_REPORT, see chalk doctor)',
      '  work parked on detention/SHOP-7-1791171685',
    ]);
  });

  it('prints the recorded first error; with CHALK_DECIDER=off asks nothing and warns of nothing', async () => {
    const first = 'E AssertionError: BROKEN exists\u001b]0;owned\u0007';
    const { root, env } = detainedRun(RUBRIC_LOG, { first_error: first });
    fake = await new FakeDecider().start();
    decider = new HttpDecider({
      entry: { id: 'decider', url: fake.url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 1 } },
    });
    const { code, out, warn } = await explain(root, env, decider, 'off');
    expect(code).toBe(0);
    expect(warn).toEqual([]);
    expect(out).toEqual([
      'SHOP-7 stopped: rubric failed (exit 1)',
      // From the sandbox: an escape sequence never reaches the terminal, not even its text.
      '  first error: E AssertionError: BROKEN exists',
      '  failing: tests/test_app.py::test_marker',
      '  work parked on detention/SHOP-7-1791171685',
    ]);
    expect(fake.requests).toHaveLength(0);
    expect(fake.healthCalls).toBe(0);
  });

  it('refuses a ticket that never ran, naming where it looked', async () => {
    const { root, env } = detainedRun();
    fake = await new FakeDecider().start();
    decider = new HttpDecider({
      entry: { id: 'decider', url: fake.url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 1 } },
    });
    await expect(
      runWhy({ repo: 'shop', root, ticket: 'SHOP-8', decider, env, out: () => {}, warn: () => {} }),
    ).rejects.toThrow(/no run of SHOP-8 in .*runs\/SHOP-8/);
  });

  it('splits a rubric log into statements: error lines first, then the last lines, in log order', () => {
    expect(rubricStatements(RUBRIC_LOG, 4)).toEqual([
      '> assert not Path("BROKEN").exists()',
      'E AssertionError: BROKEN exists',
      'tests/test_app.py:12: AssertionError',
      'FAILED tests/test_app.py::test_marker - AssertionError: BROKEN exists',
    ]);
    const six = rubricStatements(RUBRIC_LOG, 6);
    // Five error-like lines (the summary line says 'failed'), then the last line not yet kept.
    expect(six).toHaveLength(6);
    expect(six[3]).toBe('=========================== short test summary info ============================');
    expect(six[5]).toBe('========================= 1 failed, 2 passed in 0.03s ==========================');
    expect(six.join('\n')).not.toContain('\u001b');
  });
});
