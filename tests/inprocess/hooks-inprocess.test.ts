import { afterEach, describe, expect, it } from 'vitest';
import type { HookName, LoopHooks, StopRequest } from '../../core/kernel/hooks.js';
import type { Plugin } from '../../core/kernel/kernel.js';
import type { LoopKind } from '../../core/ports/agent.js';
import {
  type AgentStep,
  createTestKernel,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TicketRepo,
} from '../../core/testing/index.js';

/**
 * The hook contract (core/kernel/hooks.ts) as a run keeps it: which hooks fire, in which order,
 * how often and with what, seen by a plugin that taps every one of them as a third party would.
 */

const TICKET = 'HOOK-1';
const SPEC = `specs/${TICKET}.md`;

afterEach(removeTicketRepos);

/** The rubric passes once done.txt says ok and the spec's checkpoint is ticked (so it fails on the base: no base check). */
const repoWith = (env: Record<string, string>): TicketRepo =>
  makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-hooks-',
    rubric: `grep -q '^- \\[x\\]' ${SPEC} && grep -q '^ok$' done.txt 2>/dev/null && exit 0\necho 'FAILED tests/t.py::t - not ok'; exit 1\n`,
    spec: `# ${TICKET}: done.txt\n\n- [ ] write done.txt\n`,
    env: { CHALK_BASELINE: 'off', CHALK_MAX_RETRIES: '1', ...env },
  });

type LoopStep = AgentStep<LoopKind>;
const finish: LoopStep = async (c) => {
  await c.write('done.txt', 'ok\n');
  await c.write(SPEC, `# ${TICKET}: done.txt\n\n- [x] write done.txt\n`);
  return { answer: { status: 'done', summary: 'done' } };
};
const fail: LoopStep = async (c) => {
  await c.write('done.txt', `nope ${c.kind}\n`);
  return { answer: { status: 'done', summary: 'tried' } };
};
const reviewPass: AgentStep<'review'> = () => ({ answer: { verdict: 'pass', summary: 'fine', findings: [] } });

/** A plugin on every hook: each call is one entry (the hook's name and what it says). */
function recorder(o: { stop?: StopRequest; env?: Record<string, string> } = {}) {
  const seen: Array<{ hook: HookName; event: unknown }> = [];
  const note = (hook: HookName) => (event: unknown) => {
    seen.push({ hook, event });
  };
  const plugin: Plugin = {
    name: 'recorder',
    register(kernel) {
      const h: LoopHooks = kernel.hooks;
      h.runStart.tapPromise('recorder', async (e) => note('runStart')(e));
      h.beforeSandboxStart.tapPromise('recorder', async (e) => {
        note('beforeSandboxStart')(e.purpose);
        // Only `env` is read back: a changed ticket changes nothing.
        return { ...e, ticket: 'OTHER-9', env: { ...e.env, ...o.env } };
      });
      h.beforePrompt.tapPromise('recorder', async (c) => {
        note('beforePrompt')(c.loop);
        return c;
      });
      h.afterRubric.tapPromise('recorder', async (e) => note('afterRubric')(e.passed));
      h.onVerdict.tapPromise('recorder', async (e) => {
        note('onVerdict')(e.verdict);
        return o.stop;
      });
      h.onDetain.tapPromise('recorder', async (e) => note('onDetain')(e));
      h.prBody.tapPromise('recorder', async (body) => {
        note('prBody')(null);
        return body;
      });
      h.afterGraduate.tapPromise('recorder', async (e) => note('afterGraduate')(e));
      h.runEnd.tapPromise('recorder', async (e) => note('runEnd')(e));
    },
  };
  return { plugin, seen, hooks: () => seen.map((s) => s.hook) };
}

async function runWith(repo: TicketRepo, agent: ScriptedAgent, rec: ReturnType<typeof recorder>) {
  const t = await createTestKernel({ root: repo.root, env: repo.env, agent, plugins: [rec.plugin] });
  const r = await runTicket(t.deps(), { root: repo.root });
  return { t, r };
}

describe('the hooks as a run fires them', { timeout: 30_000 }, () => {
  it('a green run: runStart once, a sandbox each for the run and the review, prBody, afterGraduate opened, runEnd once', async () => {
    const repo = repoWith({});
    const rec = recorder({ env: { ACME_TRACE: '1' } });
    const { t, r } = await runWith(
      repo,
      new ScriptedAgent().script('continue', finish).script('review', reviewPass),
      rec,
    );
    expect(r.exitCode, t.log.text()).toBe(0);
    expect(rec.hooks()).toEqual([
      'runStart',
      'beforeSandboxStart',
      'beforePrompt',
      'afterRubric',
      'beforeSandboxStart',
      'prBody',
      'afterGraduate',
      'runEnd',
    ]);
    const by = (hook: HookName) => rec.seen.filter((s) => s.hook === hook).map((s) => s.event);
    const [start] = by('runStart') as Array<{ runId: string }>;
    expect(start).toMatchObject({ ticket: TICKET, repo: repo.repo, resumed: false });
    expect(by('beforeSandboxStart')).toEqual(['run', 'review']);
    expect(by('afterGraduate')).toEqual([
      {
        ticket: TICKET,
        branch: `chalk/${TICKET}`,
        outcome: 'opened',
        url: `https://forge.test/${encodeURIComponent(`chalk/${TICKET}`)}/1`,
      },
    ]);
    expect(by('runEnd')).toEqual([{ ...start, ending: 'graduated' }]);
    // The env a tap added reached both sandboxes; the ticket it changed did not.
    expect(t.sandbox.sessions.map((s) => [s.spec.ticket, s.spec.env?.ACME_TRACE])).toEqual([
      [TICKET, '1'],
      [TICKET, '1'],
    ]);
  });

  it('with CHALK_AUTO_MR=false, afterGraduate says ready and no body is built', async () => {
    const repo = repoWith({ CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' });
    const rec = recorder();
    const { r } = await runWith(repo, new ScriptedAgent().script('continue', finish), rec);
    expect(r.exitCode).toBe(0);
    expect(rec.hooks()).not.toContain('prBody');
    expect(rec.seen.find((s) => s.hook === 'afterGraduate')?.event).toMatchObject({ outcome: 'ready', url: null });
  });

  it('under CHALK_FP_RULES=shadow each failed loop fires onVerdict once; onDetain and runEnd say detained', async () => {
    const repo = repoWith({ CHALK_FP_RULES: 'shadow' });
    const rec = recorder();
    const { t, r } = await runWith(repo, new ScriptedAgent().script('continue', fail).script('retry', fail), rec);
    expect(r.exitCode, t.log.text()).toBe(3);
    expect(rec.hooks()).toEqual([
      'runStart',
      'beforeSandboxStart',
      'beforePrompt',
      'afterRubric',
      'onVerdict',
      'beforePrompt',
      'afterRubric',
      'onVerdict',
      'onDetain',
      'runEnd',
    ]);
    expect(rec.seen.filter((s) => s.hook === 'onVerdict').map((s) => s.event)).toEqual(['first', 'spinning']);
    expect(rec.seen.find((s) => s.hook === 'onDetain')?.event).toMatchObject({ kind: 'failed' });
    expect(rec.seen.at(-1)?.event).toMatchObject({ ending: 'detained' });
  });

  it('under CHALK_FP_RULES=off no verdict is made, so onVerdict never fires', async () => {
    const repo = repoWith({ CHALK_FP_RULES: 'off' });
    const rec = recorder();
    const { r } = await runWith(repo, new ScriptedAgent().script('continue', fail).script('retry', fail), rec);
    expect(r.exitCode).toBe(3);
    expect(rec.hooks().filter((h) => h === 'afterRubric')).toHaveLength(2);
    expect(rec.hooks()).not.toContain('onVerdict');
  });

  it('a StopRequest carries its own detention kind and next line', async () => {
    const repo = repoWith({});
    const stop: StopRequest = {
      stop: true,
      kind: 'stuck',
      reason: 'stuck: the acme judge says so',
      next: 'ask the acme judge why, then fix it yourself',
    };
    const rec = recorder({ stop });
    const { t, r } = await runWith(repo, new ScriptedAgent().script('continue', fail), rec);
    expect(r.outcome).toMatchObject({ kind: 'detained', detentionKind: 'stuck', reason: stop.reason });
    expect(t.log.text()).toContain('next: ask the acme judge why, then fix it yourself');
    expect(rec.seen.find((s) => s.hook === 'onDetain')?.event).toMatchObject({
      kind: 'stuck',
      next: stop.next,
    });
  });

  it('runEnd fires once, as an error, when the run throws', async () => {
    const repo = repoWith({});
    const rec = recorder();
    const broken = new ScriptedAgent().script('continue', () => {
      throw new Error('the agent fell over');
    });
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent: broken, plugins: [rec.plugin] });
    await expect(runTicket(t.deps(), { root: repo.root })).rejects.toThrow('the agent fell over');
    expect(rec.hooks().filter((h) => h === 'runStart' || h === 'runEnd')).toEqual(['runStart', 'runEnd']);
    expect(rec.seen.at(-1)?.event).toMatchObject({ ending: 'error', error: 'the agent fell over' });
  });

  it('the Agent port says whether it can run: its line refuses the run before anything starts', async () => {
    const repo = repoWith({});
    const rec = recorder();
    class Unready extends ScriptedAgent {
      override cannotRun(env: NodeJS.ProcessEnv): string | null {
        return env.ACME_AGENT_TOKEN ? null : 'the acme agent needs ACME_AGENT_TOKEN';
      }
    }
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent: new Unready(), plugins: [rec.plugin] });
    await expect(runTicket(t.deps(), { root: repo.root })).rejects.toThrow('the acme agent needs ACME_AGENT_TOKEN');
    expect(rec.hooks()).toEqual([]);
    expect(t.sandbox.sessions).toEqual([]);
  });
});
