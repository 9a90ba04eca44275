import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plugin } from '../../core/kernel/kernel.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { AgentStep, AgentStepContext } from '../../core/testing/index.js';
import {
  createTestKernel,
  makeTicketRepo,
  RecordingForge,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TestKernel,
} from '../../core/testing/index.js';

/**
 * The core loop in-process: `runTicket` through the testing kernel (a sandbox
 * over a temporary directory, a scripted agent, an in-memory store, a
 * recording forge, a manual clock), real host git, no container engine.
 */

const TICKET = 'PROJ-1';
const SPEC = `specs/${TICKET}.md`;
const FAIL_LINE = 'FAILED tests/test_done.py::test_done - AssertionError: done.txt is not ok';

interface Repo {
  root: string;
  env: NodeJS.ProcessEnv;
  git(...args: string[]): string;
}

/** A step of any loop kind (they all answer a LoopAnswer). */
type LoopStep = AgentStep<LoopKind>;

afterEach(removeTicketRepos);

const spec = (ticked: boolean[]) =>
  `# ${TICKET}: make done.txt\n\n${ticked.map((t, i) => `- [${t ? 'x' : ' '}] step ${i + 1}: write done.txt line ${i + 1}`).join('\n')}\n`;

/** A repository with an origin, on branch chalk/PROJ-1 with its spec committed; `config` goes in the environment. */
function makeRepo(config: Record<string, string>, o: { checkpoints?: number; rubric?: string } = {}): Repo {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-inproc-',
    // The rubric: done.txt holds one "ok" line per checkpoint.
    rubric:
      o.rubric ??
      `n=$(grep -c '^- \\[x\\]' ${SPEC}); if [ -f done.txt ] && [ "$(grep -c '^ok$' done.txt)" -ge "$n" ] && [ "$n" -gt 0 ]; then echo pass; exit 0; fi\necho '${FAIL_LINE}'; exit 1\n`,
    spec: spec(Array.from({ length: o.checkpoints ?? 1 }, () => false)),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_MAX_RETRIES: '1', ...config },
  });
}

/** A loop step that writes done.txt's `ok` lines and ticks the first `n` checkpoints. */
const doSteps =
  (n: number, total = n, cost = 0.25): LoopStep =>
  async (c) => {
    await c.write('done.txt', 'ok\n'.repeat(n));
    await c.write(SPEC, spec(Array.from({ length: total }, (_, i) => i < n)));
    return { answer: { status: 'done', summary: `did ${n}` }, costUsd: cost };
  };
const idle: LoopStep = () => ({ answer: { status: 'done', summary: 'nothing' } });
const reviewPass: AgentStep<'review'> = () => ({
  answer: { verdict: 'pass', summary: 'Looks right.', findings: [] },
  costUsd: 0.1,
});
const reviewFail: AgentStep<'review'> = () => ({
  answer: { verdict: 'fail', summary: 'Missing newline.', findings: [{ severity: 'blocker', issue: 'no notes' }] },
});

async function boot(repo: Repo, agent: ScriptedAgent, plugins: Plugin[] = []): Promise<TestKernel> {
  return createTestKernel({ root: repo.root, env: repo.env, agent, plugins });
}

const run = (t: TestKernel, repo: Repo, signal?: AbortSignal) =>
  runTicket(t.deps(), { root: repo.root, ...(signal ? { signal } : {}) });

const detained = async (t: TestKernel, repo: Repo) => {
  const r = await run(t, repo);
  expect(r.exitCode, t.log.text()).toBe(3);
  if (r.outcome.kind !== 'detained') throw new Error(`not detained: ${r.outcome.kind}`);
  return r.outcome;
};

describe('the loop in-process, through the testing kernel', { timeout: 30_000 }, () => {
  it('takes a ticket to a request: the forge got it, the branch has the loop commits, every sandbox is gone', async () => {
    const repo = makeRepo({ CHALK_SPEC_CHECK: 'true' }, { checkpoints: 2 });
    const agent = new ScriptedAgent()
      .script('spec-check', () => ({ answer: { verdict: 'pass', problems: [] } }))
      .script('continue', doSteps(1, 2), doSteps(2, 2))
      .script('review', reviewPass);
    const t = await boot(repo, agent);
    const before = repo.git('rev-parse', 'HEAD');
    const r = await run(t, repo);
    expect(r.exitCode, t.log.text()).toBe(0);
    expect(r.outcome).toMatchObject({ kind: 'graduated', outcome: 'opened' });
    expect(t.forge.requests).toHaveLength(1);
    expect(t.forge.requests[0]).toMatchObject({ branch: `chalk/${TICKET}`, base: 'main' });
    expect(t.forge.requests[0]?.body).toContain('Looks right.');
    expect(repo.git('log', '--format=%s', `${before}..HEAD`).split('\n')).toEqual([
      `chalk(${TICKET}): continue, loop 2`,
      `chalk(${TICKET}): continue, loop 1`,
    ]);
    expect(readFileSync(join(repo.root, 'done.txt'), 'utf8')).toBe('ok\nok\n');
    // Pushed: the origin has the branch at HEAD.
    expect(repo.git('rev-parse', `origin/chalk/${TICKET}`)).toBe(repo.git('rev-parse', 'HEAD'));
    const rows = t.store.callsOf(TICKET);
    expect(rows.map((c) => [c.kind, c.agentStatus, c.rubricExit, c.progressed])).toEqual([
      ['spec-check', 'pass', 0, false],
      ['continue', 'ok', 0, true],
      ['continue', 'ok', 0, true],
      ['review', 'pass', 0, false],
    ]);
    expect(rows[1]?.costUsd).toBe(0.25);
    expect(t.store.tables.events.map((e) => e.kind)).toEqual(['submitted']);
    expect(t.sandbox.sessions.length).toBe(2);
    expect(t.sandbox.openSessions()).toEqual([]);
    expect(existsSync(join(repo.env.XDG_STATE_HOME as string))).toBe(true);
  });

  it('says the branch is pushed when the forge cannot open the request after the push', async () => {
    const repo = makeRepo({ CHALK_SPEC_CHECK: 'false' }, { checkpoints: 1 });
    const agent = new ScriptedAgent().script('continue', doSteps(1, 1)).script('review', reviewPass);
    const forge = new (class extends RecordingForge {
      override async openRequest(): Promise<{ url: string | null }> {
        throw new Error('gh: HTTP 502 from the API\nsecond line');
      }
    })();
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent, forge });
    const err = await run(t, repo).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `gh: HTTP 502 from the API; chalk/${TICKET} is pushed to origin but no request was opened: open it yourself, or run chalk submit again`,
    );
    expect(repo.git('rev-parse', `origin/chalk/${TICKET}`)).toBe(repo.git('rev-parse', 'HEAD'));
  });

  it('detains when the rubric still fails after the retries', async () => {
    const repo = makeRepo({});
    const writeBad: LoopStep = async (c) => {
      await c.write('done.txt', `nope ${c.kind}\n`);
      return { answer: { status: 'done', summary: 'tried' } };
    };
    const agent = new ScriptedAgent().script('continue', writeBad).script('retry', writeBad);
    const t = await boot(repo, agent);
    const head = repo.git('rev-parse', 'HEAD');
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('failed');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    // The failed attempt is parked on the detention branch, with the agent's file.
    expect(repo.git('show', `${d.branch}:done.txt`)).toBe('nope retry');
    expect(t.store.tables.lessons).toHaveLength(1);
    expect(t.store.tables.lessons[0]?.firstError).toContain('done.txt is not ok');
    expect(t.store.tables.events.map((e) => e.kind)).toEqual(['detention']);
    // The retry was told why.
    expect(agent.calls[1]?.prompt).toContain('done.txt is not ok');
  });

  it('detains a blocked agent at once, with its blocker', async () => {
    const repo = makeRepo({});
    const agent = new ScriptedAgent().script('continue', () => ({
      answer: { status: 'blocked', summary: 's', blocker: 'the API key for the shop is missing' },
    }));
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('blocked');
    expect(t.log.text()).toContain('the API key for the shop is missing');
    expect(t.store.callsOf(TICKET).map((c) => [c.agentStatus, c.verdict])).toEqual([['blocked', 'blocked']]);
  });

  it('detains after agent errors through the retries', async () => {
    const repo = makeRepo({});
    const fail: LoopStep = () => ({ answer: 'none', status: 'error_max_turns' });
    const agent = new ScriptedAgent().script('continue', fail).script('retry', fail);
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('agent_error');
    expect(t.store.callsOf(TICKET).map((c) => c.agentStatus)).toEqual(['error_max_turns', 'error_max_turns']);
  });

  it('detains at the loop limit', async () => {
    const repo = makeRepo({ CHALK_MAX_LOOPS: '1' }, { checkpoints: 2 });
    const agent = new ScriptedAgent().script('continue', doSteps(1, 2));
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('loop_limit');
    expect(agent.calls).toHaveLength(1);
  });

  it('detains green loops that tick nothing (no progress)', async () => {
    const repo = makeRepo({}, { rubric: 'echo fine\n' });
    const agent = new ScriptedAgent().script('continue', idle).script('retry', async (c) => {
      await c.write('other.txt', 'x\n');
      return { answer: { status: 'done', summary: 'x' } };
    });
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('passed');
  });

  it('detains when the review still fails after its rounds', async () => {
    const repo = makeRepo({ CHALK_REVIEW_ROUNDS: '1' });
    const agent = new ScriptedAgent()
      .script('continue', doSteps(1))
      .script('review', reviewFail, reviewFail)
      .script('fix-review', idle);
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('review');
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue', 'review', 'fix-review', 'review']);
    expect(agent.calls[2]?.prompt).toContain('no notes');
    expect(t.forge.requests).toEqual([]);
  });

  it('graduates a review fixed through fix-review', async () => {
    const repo = makeRepo({});
    const fix: LoopStep = async (c) => {
      await c.write('NOTES.md', 'notes\n');
      return { answer: { status: 'done', summary: 'added notes' } };
    };
    const agent = new ScriptedAgent()
      .script('continue', doSteps(1))
      .script('review', reviewFail, reviewPass)
      .script('fix-review', fix);
    const t = await boot(repo, agent);
    const r = await run(t, repo);
    expect(r.exitCode, t.log.text()).toBe(0);
    expect(t.forge.requests).toHaveLength(1);
    expect(repo.git('log', '-1', '--format=%s')).toBe(`chalk(${TICKET}): fix-review, loop 2`);
    expect(readFileSync(join(repo.root, 'NOTES.md'), 'utf8')).toBe('notes\n');
  });

  it('refuses a loop that changes .chalk/ and detains the second one as guard; nothing reaches the branch', async () => {
    const repo = makeRepo({});
    const sneaky: LoopStep = async (c) => {
      await c.write('.chalk/config', 'CHALK_TEST_CMD=true\n');
      await c.write('done.txt', 'ok\n');
      await c.write(SPEC, spec([true]));
      return { answer: { status: 'done', summary: 'done' } };
    };
    const agent = new ScriptedAgent().script('continue', sneaky).script('retry', sneaky);
    const t = await boot(repo, agent);
    const head = repo.git('rev-parse', 'HEAD');
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('guard');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(readFileSync(join(repo.root, '.chalk/config'), 'utf8')).toBe('CHALK_TEST_CMD=bash test.sh\n');
    expect(agent.calls[1]?.prompt).toContain('.chalk/');
  });

  it('with CHALK_FP_RULES=on, a failing loop that repeats the last one detains as repeat', async () => {
    const repo = makeRepo({ CHALK_FP_RULES: 'on', CHALK_MAX_RETRIES: '5' });
    const agent = new ScriptedAgent().script('continue', idle).script('retry', idle);
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('repeat');
    expect(t.store.callsOf(TICKET).map((c) => c.verdict)).toEqual(['first', 'repeat']);
  });

  it('with CHALK_FP_RULES=on, green loops on the same tree detain as no_change', async () => {
    const repo = makeRepo({ CHALK_FP_RULES: 'on', CHALK_MAX_RETRIES: '5' }, { rubric: 'echo fine\n' });
    const agent = new ScriptedAgent().script('continue', idle).script('retry', idle);
    const t = await boot(repo, agent);
    const d = await detained(t, repo);
    expect(d.detentionKind).toBe('no_change');
  });

  it('stops when a tapped plugin says so on onVerdict', async () => {
    const repo = makeRepo({ CHALK_MAX_RETRIES: '5' });
    const seen: string[] = [];
    const stopper: Plugin = {
      name: 'stopper',
      register(kernel) {
        kernel.hooks.onVerdict.tapPromise('stopper', async (e) => {
          seen.push(e.verdict);
          return { stop: true, reason: 'one failure is enough' };
        });
      },
    };
    const agent = new ScriptedAgent().script('continue', idle);
    const t = await boot(repo, agent, [stopper]);
    const d = await detained(t, repo);
    expect(d.reason).toContain('stopped by stopper: one failure is enough');
    expect(seen).toEqual(['first']);
    expect(agent.calls).toHaveLength(1);
  });

  it('records an interrupted call when the signal aborts mid-call, and stops every sandbox', async () => {
    const repo = makeRepo({});
    const controller = new AbortController();
    let started: () => void = () => {};
    const inCall = new Promise<void>((r) => {
      started = r;
    });
    const hang: LoopStep = async (c: AgentStepContext) => {
      started();
      await c.exec('sleep 30');
      return { answer: { status: 'done', summary: 'never' } };
    };
    const agent = new ScriptedAgent().script('continue', hang);
    const t = await boot(repo, agent);
    const p = run(t, repo, controller.signal);
    await inCall;
    controller.abort(new Error('interrupted by SIGTERM'));
    await expect(p).rejects.toThrow('interrupted by SIGTERM');
    const rows = t.store.callsOf(TICKET);
    expect(rows.map((c) => [c.kind, c.agentStatus, c.loop])).toEqual([['continue', 'interrupted', 1]]);
    expect(t.sandbox.openSessions()).toEqual([]);
  });
});
