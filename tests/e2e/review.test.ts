import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
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
  nextLines,
  type Rig,
  reviewFail,
  reviewPass,
  startRig,
  ticketState,
} from './harness.js';

/**
 * The final review, end to end: findings go to a fix-review loop, and a review
 * that still fails after the allowed rounds detains the run.
 */
const available = await e2eAvailable();

const FINDING = 'greet.sh has no shebang line, so running it directly fails';
/** A fix-review loop that acts on the finding. */
const fixShebang = (): s.Script => [
  s.write('/work/repo/greet.sh', '#!/bin/sh\necho hello\n'),
  s.loopDone('1', 'added the shebang the review asked for'),
];

describe.skipIf(!available)('chalk run, end to end: the final review', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('fixes the findings of a failed review in a fix-review loop, then opens a merge request', async () => {
    const sc = makeScenario({ checkpoints: 1 });
    rig.script({
      loops: [doCheckpoint(sc.ticket, 1), fixShebang()],
      reviews: [reviewFail(FINDING), reviewPass('The script prints hello and now runs directly.')],
    });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_FORGE: 'gitlab' } });
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);
    expect(rig.seen.map((x) => x.kind)).toEqual(['loop', 'review', 'loop', 'review']);
    // The fix-review loop was given the findings.
    expect(rig.seen[2]?.prompt).toContain('<review_findings>');
    expect(rig.seen[2]?.prompt).toContain(FINDING);
    expect(r.lines).toContain('loop 2 (fix-review) started');
    expect(sc.subjects(sc.branch)).toEqual([
      `chalk(${sc.ticket}): fix-review, loop 2`,
      `chalk(${sc.ticket}): continue, loop 1`,
      `chalk(${sc.ticket}): spec`,
    ]);
    expect(sc.originBranches()).toContain(sc.branch);
    const [req, ...more] = sc.forge.requests();
    expect(more).toEqual([]);
    expect(req?.cli).toBe('glab');
    expect(req?.problems).toEqual([]);
    expect(flag(req?.argv ?? [], '--source-branch')).toBe(sc.branch);
    expect(flag(req?.argv ?? [], '--target-branch')).toBe('main');
    expect(flag(req?.argv ?? [], '--description')).toContain('The script prints hello and now runs directly.');
    const rows = await calls(rig, sc);
    expect(rows.map((c) => [c.kind, c.loop, c.agent_status, c.progressed])).toEqual([
      ['continue', 1, 'ok', true],
      ['review', 0, 'fail', false],
      ['fix-review', 2, 'ok', true],
      ['review', 0, 'pass', false],
    ]);
    expect(await events(rig, sc)).toEqual(['submitted']);
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });

  it('detains when the review still fails after the allowed fix round, printing the findings', async () => {
    const sc = makeScenario({ checkpoints: 1 });
    rig.script({
      loops: [doCheckpoint(sc.ticket, 1), fixShebang()],
      reviews: [reviewFail(FINDING), reviewFail('greet.sh still prints the wrong greeting')],
    });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    expect(r.code, explain(r)).toBe(3);
    expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual([
      'DETENTION: final review still finds problems after 1 fix round',
    ]);
    expect(r.lines).toContain('  | - [blocker] greet.sh: greet.sh still prints the wrong greeting');
    expect(nextLines(r)).toHaveLength(1);
    expect(nextLines(r)[0]).toContain('CHALK_REVIEW_ROUNDS (now 1)');
    // Green work (both loops) stays on the ticket branch; nothing was pushed.
    expect(sc.subjects(sc.branch)).toHaveLength(3);
    expect(sc.branches('detention/')).toHaveLength(1);
    expect(sc.originBranches()).toEqual(['main']);
    expect(sc.forge.requests()).toEqual([]);
    expect(await ticketState(rig, sc)).toBe('detained');
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
});
