import { afterEach, describe, expect, it } from 'vitest';
import { UNKNOWN_TESTS_LINE } from '../../core/fingerprint/index.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TestKernel,
} from '../../core/testing/index.js';

/**
 * Flaky tests through the real loop (testing kernel: a sandbox over a temporary
 * directory, a scripted agent, an in-memory store, no container engine). The
 * rubric counts its runs in .git (outside every tree), so "fails on odd runs,
 * passes on even ones" is a test that fails the loop's run and passes the
 * second run on the same tree.
 */

const TICKET = 'PROJ-1';
const _SPEC = `specs/${TICKET}.md`;
const FLAKY = 'tests/test_net.py::test_fetch';
const STABLE = 'tests/test_calc.py::test_mul';

afterEach(removeTicketRepos);

/** A pytest-like rubric: `odd` lines on odd runs (1st, 3rd, ...), `even` lines on even ones; exit 1 unless told. */
function rubric(o: { odd: string[]; even: string[]; evenExit: number }): string {
  const block = (lines: string[]) => lines.map((l) => `echo '${l}'`).join('; ');
  return [
    'n=$(( $(cat .git/rubric-runs 2>/dev/null || echo 0) + 1 )); echo "$n" > .git/rubric-runs',
    `if [ $((n % 2)) = 1 ]; then ${block(o.odd) || 'true'}; exit 1; fi`,
    `${block(o.even) || 'true'}; exit ${o.evenExit}`,
    '',
  ].join('\n');
}

function makeRepo(config: Record<string, string>, script: string) {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-flaky-',
    rubric: script,
    spec: `# ${TICKET}: fix it\n\n- [ ] step 1: fix it\n`,
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_MAX_RETRIES: '1', CHALK_FP_RULES: 'shadow', ...config },
  });
}

const idle: AgentStep<LoopKind> = () => ({ answer: { status: 'done', summary: 'nothing' } });

async function twoIdleLoops(config: Record<string, string>, script: string): Promise<TestKernel> {
  const repo = makeRepo(config, script);
  const agent = new ScriptedAgent().script('continue', idle).script('retry', idle);
  const t = await createTestKernel({ root: repo.root, env: repo.env, agent });
  const r = await runTicket(t.deps(), { root: repo.root });
  expect(r.exitCode, t.log.text()).toBe(3);
  return t;
}

describe('flaky tests, in-process', { timeout: 30_000 }, () => {
  const flakyOnly = rubric({
    odd: [`FAILED ${FLAKY} - ConnectionResetError: peer went away`],
    even: ['1 passed in 0.01s'],
    evenExit: 0,
  });

  it('a test that fails once then passes on the same tree is recorded as flaky, and two such loops are not a repeat', async () => {
    const t = await twoIdleLoops({}, flakyOnly);
    const rows = t.store.callsOf(TICKET);
    expect(rows.map((c) => [c.kind, c.rubricExit, c.flakyTests, c.failingTests, c.firstError])).toEqual([
      ['continue', 1, [FLAKY], null, null],
      ['retry', 1, [FLAKY], null, null],
    ]);
    // Same tree twice: the agent changed nothing (no_change), but the flaky test makes no repeat.
    expect(rows.map((c) => c.verdict)).toEqual(['first', 'no_change']);
    const log = t.log.text();
    expect(log).toContain(`flaky, left out of the fingerprint: ${FLAKY}`);
    // The loop's line names the flaky test; its failing tests are not "unknown".
    expect(log).toMatch(new RegExp(`rubric exit 1 in [0-9]+s, flaky: ${FLAKY.replace(/[.]/g, '\\.')}\\.`));
    expect(log).not.toContain(UNKNOWN_TESTS_LINE);
    // `bash test.sh` is no runner that can select tests: the rubric runs whole.
    expect(log).toMatch(/rubric run again on the same tree, whole \(1 failing test known, [^)]*\): exit 0, [0-9]+ ms/);
    // No lesson remembers the flaky failure.
    expect(t.store.tables.lessons.every((l) => l.fingerprint === null && l.firstError === null)).toBe(true);
  });

  it.each([
    ['auto', 'no test is flaky'],
    ['off', null],
  ])('a test that fails every run stays a repeat (CHALK_RERUN_FAILED=%s)', async (mode, line) => {
    const always = rubric({
      odd: [`FAILED ${FLAKY} - ConnectionResetError: peer went away`],
      even: [`FAILED ${FLAKY} - ConnectionResetError: peer went away`],
      evenExit: 1,
    });
    const t = await twoIdleLoops({ CHALK_RERUN_FAILED: mode }, always);
    const rows = t.store.callsOf(TICKET);
    expect(rows.map((c) => [c.verdict, c.flakyTests, c.failingTests])).toEqual([
      ['first', null, [FLAKY]],
      ['repeat', null, [FLAKY]],
    ]);
    if (line === null) expect(t.log.text()).not.toContain('rubric run again');
    else expect(t.log.text()).toContain(line);
  });

  it('a stable failure beside a flaky one: the fingerprint keeps the stable test and its error, from the second run', async () => {
    const t = await twoIdleLoops(
      {},
      rubric({
        odd: [`FAILED ${FLAKY} - ConnectionResetError: peer went away`, `FAILED ${STABLE} - assert 6 == 7`],
        even: [`FAILED ${STABLE} - assert 6 == 7`],
        evenExit: 1,
      }),
    );
    const rows = t.store.callsOf(TICKET);
    expect(rows.map((c) => [c.flakyTests, c.failingTests, c.firstError])).toEqual([
      [[FLAKY], [STABLE], `FAILED ${STABLE} - assert 6 == 7`],
      [[FLAKY], [STABLE], `FAILED ${STABLE} - assert 6 == 7`],
    ]);
    // The stable failure on the same tree is a repeat; the flaky one did not change that.
    expect(rows.map((c) => c.verdict)).toEqual(['first', 'repeat']);
    expect(t.store.tables.lessons[0]?.firstError).toBe(`FAILED ${STABLE} - assert 6 == 7`);
  });

  it('a failure naming no test is not run again, and the loop line says the tests are unknown', async () => {
    const t = await twoIdleLoops({}, "echo 'make: *** [Makefile:3: test] Error 1'; exit 1\n");
    const log = t.log.text();
    expect(log).toMatch(/rubric exit 1 in [0-9]+s, failing tests: unknown/);
    expect(log).toContain(`, ${UNKNOWN_TESTS_LINE}.`);
    expect(log).not.toContain('rubric run again');
    expect(t.store.callsOf(TICKET).map((c) => c.flakyTests)).toEqual([null, null]);
  });
});
