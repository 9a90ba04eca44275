import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  type ChalkRun,
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  events,
  explain,
  failingLoop,
  makeScenario,
  nextLines,
  openLessons,
  type Rig,
  type Scenario,
  startRig,
  ticketState,
} from './harness.js';

/**
 * Runs that end in detention, end to end: the failed attempt is parked on a
 * detention branch, the ticket branch keeps only green work, nothing is
 * pushed, and exactly one `next:` line tells the person what to do.
 */
const available = await e2eAvailable();

/** What every detention must leave behind; returns the detention branch. */
async function expectDetained(rig: Rig, sc: Scenario, r: ChalkRun, reason: string): Promise<string> {
  expect(r.code, explain(r)).toBe(3);
  expect(rig.model.violations).toEqual([]);
  expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual([`DETENTION: ${reason}`]);
  expect(nextLines(r), explain(r)).toHaveLength(1);
  const parked = sc.branches('detention/');
  expect(parked).toHaveLength(1);
  const branch = parked[0] as string;
  expect(branch).toMatch(new RegExp(`^detention/${sc.ticket}-\\d+$`));
  expect(r.lines.some((l) => l.includes(`git switch '${branch}'`))).toBe(true);
  expect(sc.subjects(branch, sc.branch)).toEqual([`detention(${sc.ticket}): ${reason}`]);
  expect(sc.originBranches()).toEqual(['main']);
  expect(sc.forge.calls().filter((c) => c.argv[0] !== '--version' && c.argv[0] !== 'auth')).toEqual([]);
  expect(await containers(sc)).toEqual([]);
  expect(await events(rig, sc)).toEqual(['detention']);
  expect(await openLessons(rig, sc)).toHaveLength(1);
  expect(await ticketState(rig, sc)).toBe('detained');
  return branch;
}

describe.skipIf(!available)('chalk run, end to end: detention', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('parks the work after the rubric fails three times, leaving the ticket branch as it was', async () => {
    const sc = makeScenario();
    const before = sc.git('rev-parse', sc.branch);
    rig.script({
      loops: [
        failingLoop(sc.ticket),
        failingLoop(sc.ticket, { body: 'echo hullo', ticks: false }),
        failingLoop(sc.ticket, { body: 'echo helo', ticks: false }),
      ],
    });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    const branch = await expectDetained(rig, sc, r, 'rubric failed (exit 1)');
    expect(nextLines(r)[0]).toContain('rubric.log');
    expect(sc.git('rev-parse', sc.branch)).toBe(before);
    expect(sc.git('show', `${branch}:greet.sh`)).toBe('echo helo');
    expect(sc.git('show', `${branch}:specs/${sc.ticket}.md`)).toContain('- [x] greet.sh');
    expect(r.lines.filter((l) => / started$/.test(l))).toEqual([
      'loop 1 (continue) started',
      'loop 2 (retry) started',
      'loop 3 (retry) started',
    ]);
    // The retries were told why the loop before failed.
    expect(rig.seen[1]?.prompt).toContain('<failure>');
    expect(rig.seen[1]?.prompt).toContain('FAIL tests/greet_test.sh');
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.agent_status, c.rubric_exit, c.progressed])).toEqual([
      ['continue', 'ok', 1, false],
      ['retry', 'ok', 1, false],
      ['retry', 'ok', 1, false],
    ]);
    sc.dispose();
  });

  it('detains at once when the agent reports a blocker, without running the rubric', async () => {
    const sc = makeScenario();
    rig.script({ loops: [[s.loopBlocked('the payment sandbox needs an API key that is not in the container')]] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    await expectDetained(rig, sc, r, 'agent reported a blocker');
    expect(r.lines).toContain('  | the payment sandbox needs an API key that is not in the container');
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.agent_status, c.rubric_exit, c.verdict])).toEqual([
      ['continue', 'blocked', 0, 'blocked'],
    ]);
    sc.dispose();
  });

  it('detains when the agent stops early (the spend cap), pointing at the budget', async () => {
    const sc = makeScenario();
    rig.script({ loops: [[s.bash('echo spending', { usage: s.HUGE_USAGE }), s.loopDone('1', 'never reached')]] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0' } });
    await expectDetained(rig, sc, r, 'agent stopped early (error_max_budget_usd)');
    expect(nextLines(r)[0]).toContain('CHALK_BUDGET_USD (now 1.00)');
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.agent_status, c.progressed])).toEqual([
      ['continue', 'error_max_budget_usd', false],
    ]);
    sc.dispose();
  });

  it('brings a green loop home but detains when it ticked nothing', async () => {
    const sc = makeScenario();
    const untickedWork = doCheckpoint(sc.ticket, 1).filter((step) => !JSON.stringify(step).includes('sed -i'));
    rig.script({ loops: [untickedWork] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0' } });
    await expectDetained(rig, sc, r, 'rubric passed but no checkpoint was ticked in the spec');
    // The green work is on the ticket branch; nothing was ticked.
    expect(sc.subjects(sc.branch)).toEqual([`chalk(${sc.ticket}): continue, loop 1`, `chalk(${sc.ticket}): spec`]);
    expect(sc.git('show', `${sc.branch}:greet.sh`)).toBe('echo hello');
    expect(sc.git('show', `${sc.branch}:specs/${sc.ticket}.md`)).not.toContain('- [x]');
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.agent_status, c.rubric_exit, c.progressed])).toEqual([
      ['continue', 'ok', 0, false],
    ]);
    sc.dispose();
  });

  it('stops at the loop limit with the open checkpoints counted', async () => {
    const sc = makeScenario();
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_MAX_LOOPS: '1' } });
    await expectDetained(rig, sc, r, 'loop limit of 1 reached with 1 checkpoint open');
    expect(nextLines(r)[0]).toContain('CHALK_MAX_LOOPS (now 1)');
    expect(sc.subjects(sc.branch)).toEqual([`chalk(${sc.ticket}): continue, loop 1`, `chalk(${sc.ticket}): spec`]);
    expect(rig.seen.map((x) => x.kind)).toEqual(['loop']);
    sc.dispose();
  });
});
