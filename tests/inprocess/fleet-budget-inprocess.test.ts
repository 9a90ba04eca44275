import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planPath, runPaths } from '../../core/layout.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
} from '../../core/testing/index.js';

/**
 * A fleet's ceiling inside a run (core/run/loop/fleet-budget.ts), in-process: a ticket a fleet made
 * stops into detention `fleet budget` before a call that could take the fleet's recorded spend
 * past CHALK_FLEET_BUDGET_USD; the same run outside a fleet goes on.
 */
const TICKET = 'PROJ-2';
const SPEC = `specs/${TICKET}.md`;
afterEach(removeTicketRepos);

const spec = (ticked: boolean[]) =>
  `# ${TICKET}: make done.txt\n\n## Checkpoints\n${ticked.map((t, i) => `- [${t ? 'x' : ' '}] step ${i + 1}`).join('\n')}\n`;

function makeRepo(config: Record<string, string>) {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-fleet-inproc-',
    rubric: 'exit 0\n',
    spec: spec([false, false]),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_REVIEW: 'false', CHALK_BUDGET_USD: '1.00', ...config },
  });
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
