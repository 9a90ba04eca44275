import { mkdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentWork } from '../../core/run/base/work.js';
import { CollectingLog, TempSandbox, type TempSandboxSession } from '../../core/testing/index.js';

/**
 * The agent's work apart from the harness's (core/run/base/work.ts) on the test kit's sandbox,
 * which runs the shipped scripts with real git: the calls it saves (the tree a harness run left
 * serves the next snapshot; no graft when there is nothing to leave out) give the trees the
 * calls would have given.
 */
describe('AgentWork', () => {
  const sandbox = new TempSandbox();
  afterEach(() => sandbox.closeAll());

  const setUp = async () => {
    const s = (await sandbox.open({
      repo: 'shop-1',
      source: '/nonexistent.bundle',
      ticket: 'PROJ-1',
      runId: 'PROJ-1-1',
      branch: 'chalk/PROJ-1',
      author: { name: 'a', email: 'a@example.com' },
    })) as TempSandboxSession;
    mkdirSync(s.hostPath('.'), { recursive: true });
    await s.exec(
      `git init -q . && git config user.name t && git config user.email t@example.com && echo a > a && git add a && git commit -q -m a`,
    );
    const start = (await s.exec('git rev-parse HEAD')).stdout.trim();
    const counted = { treeId: 0, graftTree: 0, restoreTree: 0 };
    for (const m of Object.keys(counted) as (keyof typeof counted)[]) {
      const real = s[m].bind(s) as (...a: unknown[]) => Promise<unknown>;
      (s as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        counted[m]++;
        return real(...a);
      };
    }
    const work = new AgentWork(s, { start, exclude: [], log: new CollectingLog() });
    return { s, work, counted };
  };
  const treeOf = async (s: TempSandboxSession, rev: string) =>
    (await s.exec(`git rev-parse ${rev}^{tree}`)).stdout.trim();

  it('after a harness run, the next snapshot is the tree it left, with no call; a rubric change is put back and remembered', async () => {
    const { s, work, counted } = await setUp();
    // The base's rubric writes a report: put back, and the tree it left is the tree before it.
    const before = await work.harness(async () => {
      await s.exec('echo r > report.txt');
      return 'ran';
    });
    expect(before).toBe('ran');
    expect(counted.restoreTree).toBe(1);
    const calls = counted.treeId;
    const snap = await work.snapshot();
    expect(counted.treeId).toBe(calls);
    expect(snap).toBe(await s.treeId());
    expect(snap).toBe(await treeOf(s, 'HEAD'));
    expect(work.lastRun()).not.toBeNull();
    // Taken once: the next snapshot asks git again.
    await work.snapshot();
    expect(counted.treeId).toBe(calls + 2);
  });

  it('with nothing to leave out, the work is the tree the agent left, without a graft, as the graft would make it', async () => {
    const { s, work, counted } = await setUp();
    // Loop 1: from the start commit (not a tree id), so the graft runs.
    let before = await work.snapshot();
    await s.exec('echo b > b');
    await work.adopt(before);
    expect(counted.graftTree).toBe(1);
    const first = await work.commit('loop 1', (await s.exec('git rev-parse HEAD')).stdout.trim());
    expect(first).not.toBeNull();
    // The harness's rubric changes nothing; loop 2 starts from the tree it left.
    await work.harness(async () => undefined);
    before = await work.snapshot();
    await s.exec('echo c > c && rm a');
    const after = await s.treeId();
    await work.adopt(before, after);
    expect(counted.graftTree).toBe(1);
    const grafted = await s.graftTree({ onto: before as string, from: before as string, to: after as string });
    expect(grafted).toBe(after);
    const second = await work.commit('loop 2', (await s.exec('git rev-parse HEAD')).stdout.trim());
    expect(await treeOf(s, second as string)).toBe(after);
  });

  it('once a harness run added a path, the graft runs and leaves it out', async () => {
    const { s, work, counted } = await setUp();
    await work.harness(async () => {
      await s.exec('echo cov > coverage.txt');
    });
    const before = await work.snapshot();
    // The agent runs the tests too (the same report) and writes its own file.
    await s.exec('echo cov > coverage.txt && echo d > d');
    await work.adopt(before);
    expect(counted.graftTree).toBe(1);
    const head = (await s.exec('git rev-parse HEAD')).stdout.trim();
    const commit = await work.commit('loop 1', head);
    const files = (await s.exec(`git ls-tree --name-only ${commit}`)).stdout.trim().split('\n');
    expect(files).toEqual(['a', 'd']);
  });
});
