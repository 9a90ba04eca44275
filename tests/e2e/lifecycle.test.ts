import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
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
  REPORT,
  type Rig,
  runDir,
  startRig,
  ticketState,
} from './harness.js';

/**
 * The rest of a run's life, end to end: the spec check, fingerprint rules
 * that stop a run, a signal mid-call, a background run, and a push the origin
 * refuses.
 */
const available = await e2eAvailable();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(200);
  }
}

describe.skipIf(!available)(
  'chalk run, end to end: checks, rules, signals, background, push',
  { timeout: 300_000 },
  () => {
    let rig: Rig;
    beforeAll(async () => {
      rig = await startRig();
    });
    afterAll(async () => {
      await rig?.close();
    });

    it('refuses to loop when the spec check fails, printing each problem and its suggestion', async () => {
      const sc = makeScenario();
      rig.script({
        spec: [
          [
            s.answer({
              verdict: 'fail',
              problems: [
                {
                  checkpoint: 'greet.sh prints hello, with a test in tests/greet_test.sh',
                  problem: 'it does not say where the greeting goes',
                  suggestion: 'greet.sh prints hello on stdout, with a test in tests/greet_test.sh',
                },
              ],
            }),
          ],
        ],
      });
      const r = await chalk(rig, sc, ['run']);
      expect(r.code, explain(r)).toBe(4);
      expect(r.lines).toContain('spec check found checkpoints that are not ready:');
      expect(r.lines).toContain('    problem: "it does not say where the greeting goes"');
      expect(r.lines).toContain(
        '    suggestion: "greet.sh prints hello on stdout, with a test in tests/greet_test.sh"',
      );
      expect(r.stderr).toContain(`rewrite the checkpoints in specs/${sc.ticket}.md`);
      expect(rig.seen.map((x) => x.kind)).toEqual(['spec']);
      expect(r.lines.some((l) => l.startsWith('loop '))).toBe(false);
      expect(sc.branches('detention/')).toEqual([]);
      expect((await calls(rig, sc)).map((c) => [c.kind, c.agent_status])).toEqual([['spec-check', 'fail']]);
      expect(await events(rig, sc)).toEqual(['spec_blocked']);
      expect(await ticketState(rig, sc)).toBe('spec-blocked');
      expect(await containers(sc)).toEqual([]);
      sc.dispose();
    });

    const rules = { CHALK_SPEC_CHECK: 'false', CHALK_FP_RULES: 'on', CHALK_TEST_REPORT: REPORT };

    it('CHALK_FP_RULES=on stops on repeat: the same failing change, the same failing test in the JUnit report', async () => {
      const sc = makeScenario();
      rig.script({ loops: [failingLoop(sc.ticket), failingLoop(sc.ticket, { ticks: false })] });
      const r = await chalk(rig, sc, ['run'], { env: rules });
      expect(r.code, explain(r)).toBe(3);
      expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual(['DETENTION: repeat: rubric failed (exit 1)']);
      expect(nextLines(r)).toHaveLength(1);
      expect(nextLines(r)[0]).toContain('same failing change twice');
      const rows = await calls(rig, sc);
      expect(rows.map((c) => [c.kind, c.rubric_exit, c.verdict, c.fp_rules])).toEqual([
        ['continue', 1, 'first', 'on'],
        ['retry', 1, 'repeat', 'on'],
      ]);
      expect(rows[0]?.failing_tests).toContain('greet_test');
      expect(rows[1]?.tree_id).toBe(rows[0]?.tree_id);
      expect(sc.branches('detention/')).toHaveLength(1);
      expect(sc.originBranches()).toEqual(['main']);
      sc.dispose();
    });

    it('CHALK_FP_RULES=on stops on no_change: a green retry that changed nothing', async () => {
      const sc = makeScenario();
      const untickedWork = doCheckpoint(sc.ticket, 1).filter((step) => !JSON.stringify(step).includes('sed -i'));
      rig.script({ loops: [untickedWork, [s.bash('git status --short'), s.loopDone('1', 'it is done')]] });
      const r = await chalk(rig, sc, ['run'], { env: rules });
      expect(r.code, explain(r)).toBe(3);
      expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual([
        'DETENTION: no_change: rubric passed but no checkpoint was ticked in the spec',
      ]);
      expect(nextLines(r)).toHaveLength(1);
      const rows = await calls(rig, sc);
      expect(rows.map((c) => [c.kind, c.rubric_exit, c.verdict])).toEqual([
        ['continue', 0, 'first'],
        ['retry', 0, 'no_change'],
      ]);
      sc.dispose();
    });

    it('stops cleanly on SIGTERM mid-call: exit 143, no container, state stopped', async () => {
      const sc = makeScenario();
      rig.script({ loops: [[s.say('thinking for a long time', { sleepMs: 120_000 })]] });
      let pid = 0;
      const running = chalk(rig, sc, ['run'], {
        env: { CHALK_SPEC_CHECK: 'false' },
        onStart: (child) => {
          pid = child.pid ?? 0;
        },
      });
      await until('the agent call to reach the model', () => rig.seen.some((x) => x.kind === 'loop'));
      process.kill(pid, 'SIGTERM');
      const r = await running;
      expect(r.code, explain(r)).toBe(143);
      expect(r.ms).toBeLessThan(60_000);
      expect(await containers(sc)).toEqual([]);
      expect(existsSync(runDir(rig, sc).pid)).toBe(false);
      expect(await ticketState(rig, sc)).toBe('stopped');
      expect(sc.originBranches()).toEqual(['main']);
      sc.dispose();
    });

    it('--detach returns at once with the pid; status says running; logs show the run to its request', async () => {
      const sc = makeScenario({ checkpoints: 1 });
      rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
      const env = { CHALK_SPEC_CHECK: 'false', CHALK_REVIEW: 'false' };
      const r = await chalk(rig, sc, ['run', '--detach'], { env });
      expect(r.code, explain(r)).toBe(0);
      expect(r.ms).toBeLessThan(10_000);
      const m = /running in the background \(pid (\d+)\); follow with: chalk logs (\S+) -f/.exec(r.lines.join('\n'));
      expect(m, explain(r)).not.toBeNull();
      expect(m?.[2]).toBe(sc.ticket);
      const pid = Number(m?.[1]);
      expect(await ticketState(rig, sc)).toBe('running');
      await until('the background run to end', () => !alive(pid), 180_000);
      const logs = await chalk(rig, sc, ['logs', sc.ticket]);
      expect(logs.code, explain(logs)).toBe(0);
      expect(logs.lines).toContain('loop 1 (continue) started');
      expect(logs.lines).toContain('request opened: https://github.com/acme/shop/pull/7');
      expect(sc.forge.requests()).toHaveLength(1);
      expect(await ticketState(rig, sc)).toBe('submitted');
      expect(await containers(sc)).toEqual([]);
      sc.dispose();
    });

    it('shows the remote message and opens nothing when the origin refuses the push', async () => {
      const sc = makeScenario({
        checkpoints: 1,
        preReceive: '#!/bin/sh\necho "branch policy: pushes of chalk/* need an approval" >&2\nexit 1\n',
      });
      rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
      const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_REVIEW: 'false' } });
      expect(r.code, explain(r)).toBe(5);
      expect(r.stderr).toContain('remote: branch policy: pushes of chalk/* need an approval');
      expect(r.stderr).toContain(`could not push ${sc.branch} to origin`);
      expect(sc.originBranches()).toEqual(['main']);
      expect(sc.forge.requests()).toEqual([]);
      expect(await events(rig, sc)).not.toContain('submitted');
      // The green work is safe on the local ticket branch.
      expect(sc.subjects(sc.branch)).toEqual([`chalk(${sc.ticket}): continue, loop 1`, `chalk(${sc.ticket}): spec`]);
      expect(await containers(sc)).toEqual([]);
      sc.dispose();
    });
  },
);
