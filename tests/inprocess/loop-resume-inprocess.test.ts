import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import type { LoopKind } from '../../core/ports/agent.js';
import { ticketStatus } from '../../core/run/commands/ticket-status.js';
import { parseRecord } from '../../core/run/resume/resume.js';
import {
  type AgentStep,
  CollectingLog,
  createTestKernel,
  ManualClock,
  MemoryStore,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
} from '../../core/testing/index.js';

/**
 * Resume in-process: a run that dies without an ending (an error out of the
 * loop stands for SIGKILL: nothing after it runs; the signal's abort for
 * SIGTERM) and the next `runTicket` of the ticket, with the same store and
 * state directory, through the testing kernel.
 */

const TICKET = 'PROJ-1';
const SPEC = `specs/${TICKET}.md`;
afterEach(removeTicketRepos);

const spec = (ticked: boolean[]) =>
  `# ${TICKET}: make done.txt\n\n${ticked.map((t, i) => `- [${t ? 'x' : ' '}] step ${i + 1}: write done.txt line ${i + 1}`).join('\n')}\n`;

/** A repository on chalk/PROJ-1 with a spec of `checkpoints` steps; its rubric wants one `ok` line per ticked step. */
function makeRepo(config: Record<string, string>, checkpoints: number) {
  const repo = makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-resume-',
    rubric: `n=$(grep -c '^- \\[x\\]' ${SPEC}); if [ -f done.txt ] && [ "$(grep -c '^ok$' done.txt)" -ge "$n" ]; then exit 0; fi\necho 'FAILED done.txt'; exit 1\n`,
    spec: spec(Array.from({ length: checkpoints }, () => false)),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_REVIEW: 'false', ...config },
  });
  return { ...repo, paths: runPaths(repo.repo, TICKET, repo.env) };
}
type Repo = ReturnType<typeof makeRepo>;

/** Ticks the first `n` of `total` checkpoints and writes their `ok` lines; costs $0.25. */
const doSteps =
  (n: number, total: number): AgentStep<LoopKind> =>
  async (c) => {
    await c.write('done.txt', 'ok\n'.repeat(n));
    await c.write(SPEC, spec(Array.from({ length: total }, (_, i) => i < n)));
    return { answer: { status: 'done', summary: `did ${n}` }, costUsd: 0.25 };
  };
const failing: AgentStep<LoopKind> = async (c) => {
  await c.write('done.txt', 'nope\n');
  return { answer: { status: 'done', summary: 'tried' }, costUsd: 0.1 };
};
/** Stands for a SIGKILL mid-call: the run goes no further (nothing ends it, nothing is recorded). */
const killed: AgentStep<LoopKind> = () => {
  throw new Error('killed');
};

/** One machine: the store, the clock and the log live across the runs (the state directory is the repo's). */
function machine() {
  const clock = new ManualClock();
  return { clock, store: new MemoryStore(clock), log: new CollectingLog() };
}

async function runOnce(
  repo: Repo,
  m: ReturnType<typeof machine>,
  agent: ScriptedAgent,
  env: Record<string, string> = {},
) {
  m.log.lines.length = 0;
  m.clock.advance(60_000);
  const t = await createTestKernel({ root: repo.root, env: { ...repo.env, ...env }, agent, ...m });
  return { t, result: runTicket(t.deps(), { root: repo.root }) };
}

const record = (repo: Repo) => parseRecord(readFileSync(repo.paths.record, 'utf8'));
const lines = (m: ReturnType<typeof machine>) => m.log.lines.map((l) => l.text.replace(`[${TICKET}] `, ''));

describe('resuming a run that ended without an ending', { timeout: 30_000 }, () => {
  it('continues after the second green loop: same run id, loop 3 next, the loops count against CHALK_MAX_LOOPS', async () => {
    const repo = makeRepo({}, 4);
    const m = machine();
    const first = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(1, 4), doSteps(2, 4), killed));
    await expect(first.result).rejects.toThrow('killed');
    const green = repo.git('rev-parse', 'HEAD');
    expect(record(repo)).toMatchObject({ ended: null, loops: 2, failures: 0 });
    const runId = m.store.callsOf(TICKET)[0]?.runId;
    // chalk status does not call it running, and not what its last row alone says either.
    const status = await ticketStatus({ repo: repo.repo, root: repo.root, store: async () => m.store, env: repo.env });
    expect(status.tickets.find((x) => x.ticket === TICKET)?.state).toBe('stopped');

    const agent = new ScriptedAgent().script('continue', doSteps(3, 4), doSteps(4, 4));
    const second = await runOnce(repo, m, agent, { CHALK_MAX_LOOPS: '3' });
    const r = await second.result;
    expect(lines(m)[0]).toBe('resuming after loop 2 ($0.50 spent)');
    expect(r.outcome).toMatchObject({ kind: 'detained', detentionKind: 'loop_limit' });
    // The resumed sandbox started from the last green commit: loop 3 built on it.
    expect(repo.git('rev-list', '--count', `${green}..chalk/${TICKET}`)).toBe('1');
    expect(agent.calls).toHaveLength(1);
    const rows = m.store.callsOf(TICKET);
    expect(rows.map((c) => [c.loop, c.kind, c.runId])).toEqual([
      [1, 'continue', runId],
      [2, 'continue', runId],
      [3, 'continue', runId],
    ]);
    expect(record(repo)).toMatchObject({ runId, ended: 'detained', loops: 4 });
  });

  it('after SIGTERM (the call recorded interrupted) resumes at the interrupted loop, which runs again', async () => {
    const repo = makeRepo({}, 3);
    const m = machine();
    const controller = new AbortController();
    const hang: AgentStep<LoopKind> = async (c) => {
      queueMicrotask(() => controller.abort(new Error('interrupted by SIGTERM')));
      await c.exec('sleep 30');
      return { answer: { status: 'done', summary: 'never' } };
    };
    const agent1 = new ScriptedAgent().script('continue', doSteps(1, 3), hang);
    m.clock.advance(60_000);
    const t1 = await createTestKernel({ root: repo.root, env: repo.env, agent: agent1, ...m });
    await expect(runTicket(t1.deps(), { root: repo.root, signal: controller.signal })).rejects.toThrow('SIGTERM');
    expect(m.store.callsOf(TICKET).map((c) => [c.loop, c.agentStatus])).toEqual([
      [1, 'ok'],
      [2, 'interrupted'],
    ]);
    const second = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(2, 3), doSteps(3, 3)));
    const r = await second.result;
    expect(lines(m)[0]).toBe('resuming after loop 1 ($0.25 spent)');
    expect(r.outcome.kind, m.log.text()).toBe('graduated');
    expect(m.store.callsOf(TICKET).map((c) => [c.loop, c.agentStatus])).toEqual([
      [1, 'ok'],
      [2, 'interrupted'],
      [2, 'ok'],
      [3, 'ok'],
    ]);
  });

  it('carries the failures into CHALK_MAX_RETRIES', async () => {
    const repo = makeRepo({ CHALK_MAX_RETRIES: '1' }, 2);
    const m = machine();
    // Loop 2 fails (a retry is next): then the process dies.
    const first = await runOnce(
      repo,
      m,
      new ScriptedAgent().script('continue', doSteps(1, 2), failing).script('retry', killed),
    );
    await expect(first.result).rejects.toThrow('killed');
    expect(record(repo)).toMatchObject({ loops: 2, failures: 1 });
    const agent = new ScriptedAgent().script('continue', failing);
    const second = await runOnce(repo, m, agent);
    const r = await second.result;
    expect(lines(m)[0]).toBe('resuming after loop 2 ($0.35 spent)');
    // The resumed loop starts from the green commit (a continue: the failed work is gone); one failure more detains.
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue']);
    expect(r.outcome).toMatchObject({ kind: 'detained', detentionKind: 'failed' });
  });

  it('starts fresh at loop 1 after a detention, and when the killed run finished no loop', async () => {
    const repo = makeRepo({ CHALK_MAX_LOOPS: '1' }, 2);
    const m = machine();
    const first = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(1, 2)));
    expect((await first.result).outcome.kind).toBe('detained');
    const second = await runOnce(repo, m, new ScriptedAgent().script('continue', killed));
    await expect(second.result).rejects.toThrow('killed');
    expect(lines(m).some((l) => l.startsWith('resuming'))).toBe(false);
    const third = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(2, 2)), {
      CHALK_MAX_LOOPS: '5',
    });
    expect((await third.result).outcome.kind).toBe('graduated');
    expect(lines(m).some((l) => l.startsWith('resuming'))).toBe(false);
    const rows = m.store.callsOf(TICKET);
    expect(rows.map((c) => c.loop)).toEqual([1, 1]);
    expect(new Set(rows.map((c) => c.runId)).size).toBe(2);
  });

  it('refuses while the run is alive (its claim), and resumes it once it is gone', async () => {
    const repo = makeRepo({}, 2);
    const m = machine();
    const first = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(1, 2), killed));
    await expect(first.result).rejects.toThrow('killed');
    // Another process holds the ticket: as if the killed run were still running.
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(repo.paths.pid, `${sleeper.pid}\n`);
      const agent = new ScriptedAgent();
      const { result } = await runOnce(repo, m, agent);
      await expect(result).rejects.toThrow(`a run for ${TICKET} is already active (pid ${sleeper.pid})`);
      expect(agent.calls).toEqual([]);
      expect(record(repo)).toMatchObject({ ended: null, loops: 1 });
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
    }
    const second = await runOnce(repo, m, new ScriptedAgent().script('continue', doSteps(2, 2)));
    expect((await second.result).outcome.kind, m.log.text()).toBe('graduated');
    expect(lines(m)[0]).toBe('resuming after loop 1 ($0.25 spent)');
  });
});
