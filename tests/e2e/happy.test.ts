import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flag } from './fake-forge.js';
import {
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  events,
  explain,
  makeScenario,
  type Rig,
  reviewPass,
  startRig,
  ticketState,
} from './harness.js';

/**
 * The happy path, end to end: a real `chalk run` takes a two-checkpoint spec
 * to an opened pull request through the real claude CLI in the real sandbox.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('chalk run, end to end: the happy path', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('loops twice, passes review, pushes and opens the request with the summary body', async () => {
    const sc = makeScenario();
    const specCommit = sc.git('rev-parse', 'HEAD');
    rig.script({
      loops: [doCheckpoint(sc.ticket, 1), doCheckpoint(sc.ticket, 2)],
      reviews: [reviewPass('Both scripts print what the spec asks. The tests cover them.')],
    });
    const r = await chalk(rig, sc, ['run']);
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);
    expect(rig.seen.map((x) => x.kind)).toEqual(['spec', 'loop', 'loop', 'review']);

    // Two loop commits on top of the spec commit, brought home to the ticket branch.
    expect(sc.subjects(sc.branch)).toEqual([
      `chalk(${sc.ticket}): continue, loop 2`,
      `chalk(${sc.ticket}): continue, loop 1`,
      `chalk(${sc.ticket}): spec`,
    ]);
    expect(sc.git('rev-parse', `${sc.branch}~2`)).toBe(specCommit);
    expect(sc.git('show', `${sc.branch}:specs/${sc.ticket}.md`)).not.toContain('- [ ]');
    expect(sc.git('show', `${sc.branch}:bye.sh`)).toBe('echo goodbye');
    expect(sc.git('status', '--porcelain')).toBe('');

    // Pushed, and the request opened once with the expected arguments and body.
    expect(sc.originBranches()).toContain(sc.branch);
    expect(sc.git('rev-parse', sc.branch)).toBe(sc.git('--git-dir', sc.origin, 'rev-parse', sc.branch));
    const reqs = sc.forge.requests();
    expect(reqs).toHaveLength(1);
    const [req] = reqs;
    expect(req?.problems).toEqual([]);
    expect(req?.cli).toBe('gh');
    expect(flag(req?.argv ?? [], '--head')).toBe(sc.branch);
    expect(flag(req?.argv ?? [], '--base')).toBe('main');
    expect(flag(req?.argv ?? [], '--title')).toBe(`${sc.ticket}: Greetings`);
    const body = req?.stdin ?? '';
    expect(body).toContain(`specs/${sc.ticket}.md`);
    expect(body).toContain('Agent loops: 2');
    expect(body).toMatch(/Agent cost: \$\d+\.\d\d/);
    expect(body).toContain('Human interventions (office hours): 0');
    expect(body).toContain('`sh check.sh` passed in the sandbox');
    expect(body).toContain('Both scripts print what the spec asks.');
    expect(r.lines).toContain('request opened: https://github.com/acme/shop/pull/7');

    // The lines a person watches, in order.
    const order = [
      'loop 1 (continue) started',
      'loop 2 (continue) started',
      'final review started',
      'all checkpoints complete (2 loops',
      'request opened:',
    ].map((p) => r.lines.findIndex((l) => l.startsWith(p)));
    expect(
      order.every((i) => i >= 0),
      explain(r),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    // The sandbox is gone; the database knows every call and the submission.
    expect(await containers(sc)).toEqual([]);
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.loop, c.agent_status, c.rubric_exit, c.progressed])).toEqual([
      ['spec-check', 0, 'pass', 0, false],
      ['continue', 1, 'ok', 0, true],
      ['continue', 2, 'ok', 0, true],
      ['review', 0, 'pass', 0, false],
    ]);
    expect(await events(rig, sc)).toEqual(['submitted']);
    expect(await ticketState(rig, sc)).toBe('submitted');
    sc.dispose();
  });
});
