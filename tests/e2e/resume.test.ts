import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPid } from '../../core/process/pid.js';
import { STOPPED_NOTE } from '../../core/run/commands/logs.js';
import * as s from '../fakes/model-script.js';
import {
  chalk,
  containers,
  e2eAvailable,
  explain,
  makeScenario,
  nextLines,
  pollFor,
  type Rig,
  runDir,
  type Scenario,
  startRig,
  tick,
  ticketState,
} from './harness.js';

/**
 * Resume, end to end: a real `chalk run` killed with SIGKILL (no handler runs,
 * the pid file and maybe the sandbox container stay behind) after its second
 * green loop, then `chalk run` again: it continues the same run from the
 * ticket branch's HEAD, says so with the spend the store recorded, numbers
 * its next loop 3 and counts the earlier loops against CHALK_MAX_LOOPS. Then
 * SIGTERM through `--detach` (the call in flight recorded `interrupted`), with
 * `chalk logs` and `chalk status` on the way.
 */
const available = await e2eAvailable();

/** What the loop's last turn says it used, so every loop costs something the store records. */
const USAGE = { input_tokens: 20_000, output_tokens: 2_000 };

/** A loop that makes checkpoint `n` true (a test, the code, the tick) and says so. */
const stepLoop = (ticket: string, n: number): s.Script => [
  s.write(`/work/repo/tests/step${n}_test.sh`, `[ "$(sh step${n}.sh)" = "step ${n}" ]\n`),
  s.write(`/work/repo/step${n}.sh`, `echo step ${n}\n`),
  tick(ticket),
  { ...s.loopDone(String(n), `added step${n}.sh and its test`), usage: USAGE },
];

/** A loop call that reaches the model and waits there (the run is killed meanwhile). */
const stuckInCall: s.Script = [s.say('thinking for a long time', { sleepMs: 170_000 })];

const specOf = (ticket: string, n: number) =>
  `# ${ticket}: Steps\n\n## Context\nScripts that print their step.\n\n## Checkpoints\n${Array.from(
    { length: n },
    (_, i) => `- [ ] step${i + 1}.sh prints "step ${i + 1}", with a test in tests/step${i + 1}_test.sh\n`,
  ).join('')}`;

interface RunRow {
  loop: number;
  kind: string;
  agent_status: string;
  run_id: string;
  cost: string;
}
const rows = (rig: Rig, sc: Scenario) =>
  rig.sql<RunRow>(
    'SELECT loop, kind, agent_status, run_id, cost_usd::text AS cost FROM runs WHERE repo = $1 AND ticket = $2 ORDER BY id',
    [sc.repo, sc.ticket],
  );

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits until loop `n`'s commit is on the host ticket branch and loop `n + 1`'s call has reached the model. */
async function untilGreenAndNextCall(rig: Rig, sc: Scenario, n: number): Promise<void> {
  await pollFor(
    () =>
      sc.subjects(sc.branch).includes(`chalk(${sc.ticket}): continue, loop ${n}`) &&
      rig.seen.filter((x) => x.kind === 'loop').length === n + 1
        ? true
        : undefined,
    { deadlineMs: 200_000, everyMs: 200, what: `loop ${n}'s green commit and loop ${n + 1}'s call` },
  );
}

describe.skipIf(!available)('chalk run resumes a killed run, end to end', { timeout: 600_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('SIGKILL after the second green loop: the next run resumes after loop 2 with its spend, runs loop 3, and detains there at CHALK_MAX_LOOPS=3', async () => {
    const sc = makeScenario({ spec: specOf('SHOP-1', 5) });
    const env = { CHALK_SPEC_CHECK: 'false', CHALK_REVIEW: 'false', CHALK_MAX_LOOPS: '3' };
    rig.script({ loops: [stepLoop(sc.ticket, 1), stepLoop(sc.ticket, 2), stuckInCall] });
    let pid = 0;
    const first = chalk(rig, sc, ['run'], {
      env,
      onStart: (child) => {
        pid = child.pid ?? 0;
      },
    });
    await untilGreenAndNextCall(rig, sc, 2);
    process.kill(pid, 'SIGKILL');
    const killed = await first;
    expect(killed.signal, explain(killed)).toBe('SIGKILL');
    const green = sc.git('rev-parse', sc.branch);
    // No exit handler ran: the pid file is left, naming a dead process; status does not call that running.
    expect(readPid(runDir(rig, sc).pid)).toBe(pid);
    expect(await ticketState(rig, sc)).toBe('stopped');
    const before = await rows(rig, sc);
    expect(before.map((r) => [r.loop, r.kind, r.agent_status])).toEqual([
      [1, 'continue', 'ok'],
      [2, 'continue', 'ok'],
    ]);
    const spent = before.reduce((sum, r) => sum + Number(r.cost), 0);
    expect(spent).toBeGreaterThan(0);
    // The killed run's sandbox may outlive it (its agent still waiting on the model): the next run copes.
    const leftover = await containers(sc);

    rig.script({ loops: [stepLoop(sc.ticket, 3), stepLoop(sc.ticket, 4)] });
    const r = await chalk(rig, sc, ['run'], { env });
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout.split('\n')[0], explain(r)).toBe(
      `[${sc.ticket}] resuming after loop 2 ($${spent.toFixed(2)} spent)`,
    );
    expect(r.lines).toContain('loop 3 (continue) started');
    expect(r.lines.some((l) => l.startsWith('loop 1 ') || l.startsWith('loop 4 '))).toBe(false);
    expect(r.lines.filter((l) => l.startsWith('DETENTION: '))).toEqual([
      'DETENTION: loop limit of 3 reached with 2 checkpoints open',
    ]);
    expect(nextLines(r)).toHaveLength(1);
    // One loop call in the resumed run, and it started from the last green commit.
    expect(rig.seen.filter((x) => x.kind === 'loop')).toHaveLength(1);
    expect(sc.subjects(sc.branch, green)).toEqual([`chalk(${sc.ticket}): continue, loop 3`]);
    const after = await rows(rig, sc);
    expect(after.map((x) => [x.loop, x.kind, x.agent_status])).toEqual([
      [1, 'continue', 'ok'],
      [2, 'continue', 'ok'],
      [3, 'continue', 'ok'],
    ]);
    // The same run: one run id across the kill.
    expect(new Set(after.map((x) => x.run_id)).size).toBe(1);
    expect(await containers(sc), `left over after the kill: ${leftover.join(', ') || 'none'}`).toEqual([]);
    expect(await ticketState(rig, sc)).toBe('detained');

    // Detained is an ending: the run after it starts fresh at loop 1.
    rig.script({ loops: [stepLoop(sc.ticket, 4)] });
    const again = await chalk(rig, sc, ['run'], { env: { ...env, CHALK_MAX_LOOPS: '1' } });
    expect(again.code, explain(again)).toBe(3);
    expect(again.lines.some((l) => l.startsWith('resuming'))).toBe(false);
    expect(again.lines).toContain('loop 1 (continue) started');
    sc.dispose();
  });

  it('--detach and SIGTERM: the interrupted loop runs again, chalk logs says the run stopped, chalk run --detach resumes it to its request', async () => {
    const sc = makeScenario({ spec: specOf('SHOP-2', 2), ticket: 'SHOP-2' });
    const env = { CHALK_SPEC_CHECK: 'false', CHALK_REVIEW: 'false' };
    rig.script({ loops: [stepLoop(sc.ticket, 1), stuckInCall] });
    const started = await chalk(rig, sc, ['run', '--detach'], { env });
    expect(started.code, explain(started)).toBe(0);
    const pid = Number(/\(pid (\d+)\)/.exec(started.lines.join('\n'))?.[1]);
    await untilGreenAndNextCall(rig, sc, 1);
    process.kill(pid, 'SIGTERM');
    await pollFor(() => (alive(pid) ? undefined : true), { deadlineMs: 60_000, what: 'the stopped run to be gone' });
    // SIGTERM: the call in flight is recorded interrupted, the sandbox removed.
    expect((await rows(rig, sc)).map((x) => [x.loop, x.agent_status])).toEqual([
      [1, 'ok'],
      [2, 'interrupted'],
    ]);
    expect(await containers(sc)).toEqual([]);
    expect(await ticketState(rig, sc)).toBe('stopped');
    const logs = await chalk(rig, sc, ['logs', sc.ticket]);
    expect(logs.code, explain(logs)).toBe(0);
    expect(logs.lines).toContain('loop 2 (continue) started');
    expect(logs.stdout.endsWith(STOPPED_NOTE), explain(logs)).toBe(true);
    const spent = (await rows(rig, sc)).reduce((sum, r) => sum + Number(r.cost), 0);

    rig.script({ loops: [stepLoop(sc.ticket, 2)] });
    const resumed = await chalk(rig, sc, ['run', '--detach'], { env });
    expect(resumed.code, explain(resumed)).toBe(0);
    const pid2 = Number(/\(pid (\d+)\)/.exec(resumed.lines.join('\n'))?.[1]);
    await pollFor(() => (alive(pid2) ? undefined : true), { deadlineMs: 200_000, what: 'the resumed run to end' });
    const log = await chalk(rig, sc, ['logs', sc.ticket, '-f']);
    expect(log.stdout.split('\n')[0], explain(log)).toBe(
      `[${sc.ticket}] resuming after loop 1 ($${spent.toFixed(2)} spent)`,
    );
    expect(log.lines).toContain('loop 2 (continue) started');
    expect(log.lines).toContain('request opened: https://github.com/acme/shop/pull/7');
    expect(log.stdout).not.toContain(STOPPED_NOTE);
    const after = await rows(rig, sc);
    expect(after.map((x) => [x.loop, x.agent_status])).toEqual([
      [1, 'ok'],
      [2, 'interrupted'],
      [2, 'ok'],
    ]);
    expect(new Set(after.map((x) => x.run_id)).size).toBe(1);
    expect(await ticketState(rig, sc)).toBe('submitted');
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
});
