import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planPath, runPaths } from '../../core/layout.js';
import type { LoopKind } from '../../core/ports/agent.js';
import { repoKey } from '../../core/repo/git.js';
import type { AgentStep } from '../../core/testing/index.js';
import { createTestKernel, runTicket, ScriptedAgent } from '../../core/testing/index.js';

/**
 * A fleet's ceiling inside a run (core/run/fleet-budget.ts), in-process: a ticket a fleet made
 * stops into detention `fleet budget` before a call that could take the fleet's recorded spend
 * past CHALK_FLEET_BUDGET_USD; the same run outside a fleet goes on.
 */
const TICKET = 'PROJ-2';
const SPEC = `specs/${TICKET}.md`;
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const spec = (ticked: boolean[]) =>
  `# ${TICKET}: make done.txt\n\n## Checkpoints\n${ticked.map((t, i) => `- [${t ? 'x' : ' '}] step ${i + 1}`).join('\n')}\n`;

function makeRepo(config: Record<string, string>) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chalk-fleet-inproc-')));
  made.push(base);
  const root = join(base, 'shop');
  mkdirSync(root);
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: root,
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
    }).trim();
  execFileSync('git', ['init', '--quiet', '--bare', join(base, 'origin.git')]);
  git('init', '--quiet', '-b', 'main');
  git('config', 'user.name', 'Test');
  git('config', 'user.email', 'test@example.com');
  writeFileSync(join(root, 'test.sh'), 'exit 0\n');
  mkdirSync(join(root, '.chalk'));
  writeFileSync(join(root, '.chalk', 'config'), 'CHALK_TEST_CMD=bash test.sh\n');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'init');
  git('remote', 'add', 'origin', join(base, 'origin.git'));
  git('push', '--quiet', 'origin', 'main');
  git('checkout', '--quiet', '-b', `chalk/${TICKET}`);
  mkdirSync(join(root, 'specs'));
  writeFileSync(join(root, SPEC), spec([false, false]));
  git('add', '-A');
  git('commit', '--quiet', '-m', 'spec');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: base,
    XDG_STATE_HOME: join(base, 'state'),
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key',
    CHALK_SPEC_CHECK: 'false',
    CHALK_REVIEW: 'false',
    CHALK_BUDGET_USD: '1.00',
    ...config,
  };
  return { root, env, repo: repoKey(root) };
}

/** Marks the ticket as fleet EPIC-1's, with the plan saved, as `chalk fleet` does. */
function joinFleet(r: ReturnType<typeof makeRepo>): void {
  const paths = runPaths(r.repo, TICKET, r.env);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.fleet, 'EPIC-1\n');
  const plan = planPath(r.repo, 'EPIC-1', r.env);
  mkdirSync(dirname(plan), { recursive: true });
  writeFileSync(plan, JSON.stringify({ workstreams: [{ ticket: TICKET, title: 't', checkpoints: ['a', 'b'] }] }));
}

const step =
  (n: number): AgentStep<LoopKind> =>
  async (c) => {
    await c.write(SPEC, spec([true, n === 2]));
    return { answer: { status: 'done', summary: `did ${n}` }, costUsd: 0.6 };
  };

describe('the fleet budget inside a run', { timeout: 30_000 }, () => {
  it("stops a fleet's run into detention before a call that could pass the ceiling", async () => {
    const r = makeRepo({ CHALK_FLEET_BUDGET_USD: '1.50' });
    joinFleet(r);
    const agent = new ScriptedAgent().script('continue', step(1), step(2));
    const t = await createTestKernel({ root: r.root, env: r.env, agent });
    const res = await runTicket(t.deps(), { root: r.root });
    expect(res.exitCode, t.log.text()).toBe(3);
    expect(res.outcome).toMatchObject({
      kind: 'detained',
      detentionKind: 'fleet_budget',
      reason:
        'fleet budget: fleet EPIC-1 has spent $0.60 of CHALK_FLEET_BUDGET_USD=$1.50, and another call could pass it',
    });
    // One loop ran; the second was never asked.
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue']);
    expect(t.log.text()).toContain("next: this ticket's fleet reached its spend ceiling");
  });

  it('lets the same run go on outside a fleet, or under a ceiling it fits', async () => {
    for (const [ceiling, fleet] of [
      ['1.50', false],
      ['2.60', true],
    ] as const) {
      const r = makeRepo({ CHALK_FLEET_BUDGET_USD: ceiling });
      if (fleet) joinFleet(r);
      const agent = new ScriptedAgent().script('continue', step(1), step(2));
      const t = await createTestKernel({ root: r.root, env: r.env, agent });
      const res = await runTicket(t.deps(), { root: r.root });
      expect(res.exitCode, t.log.text()).toBe(0);
      expect(agent.calls.map((c) => c.kind)).toEqual(['continue', 'continue']);
    }
  });
});
