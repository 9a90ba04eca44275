import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../../core/ports/store.js';
import { repoKey } from '../../../core/repo/git.js';
import { PgStore } from '../../../core/store/index.js';
import { chalk, scratchRepo } from '../../helpers/cli.js';
import { embedded } from './backends.js';

/** `chalk lessons` and its subcommands, the real CLI against the embedded store. */

const call = (repo: string, progressed: boolean): CallRecord => ({
  repo,
  ticket: 'SHOP-1',
  branch: 'b',
  loop: 2,
  kind: 'retry',
  agentStatus: 'ok',
  rubricExit: progressed ? 0 : 1,
  progressed,
  model: 'm',
  prompts: 'p',
  costUsd: 0,
  budgetUsd: 1,
  durationS: 1,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  turns: 1,
  denials: 0,
  lessons: 1,
});

describe('chalk lessons', { timeout: 120_000 }, () => {
  let db: Awaited<ReturnType<typeof embedded.fresh>>;
  let repo: string;
  let other: string;
  const ids: Record<'mine' | 'general' | 'theirs' | 'open', number> = { mine: 0, general: 0, theirs: 0, open: 0 };
  const run = (...args: string[]) => chalk(args, { cwd: repo, env: db.env });

  beforeAll(async () => {
    db = await embedded.fresh();
    repo = scratchRepo('shop');
    other = scratchRepo('api');
    const here = repoKey(repo);
    const store = await PgStore.open(db.target, 120_000);
    try {
      const resolved = async (r: string, lesson: string, scope: 'repo' | 'general') => {
        const id = await store.lessons.open({ repo: r, ticket: 'SHOP-1', signature: `rubric failed\n${lesson}` });
        await store.lessons.resolve({
          id,
          resolution: `note for ${lesson}`,
          lesson,
          resolvedBy: 'me@example.com',
          scope,
        });
        return id;
      };
      ids.mine = await resolved(
        here,
        'When redis refuses connections, start it in the setup command, because tests need it.',
        'repo',
      );
      ids.general = await resolved(repoKey(other), 'When vitest hangs, pass --pool=forks.', 'general');
      ids.theirs = await resolved(repoKey(other), 'Their own lesson.', 'repo');
      ids.open = await store.lessons.open({ repo: here, ticket: 'SHOP-2', signature: 'still open' });
      const failed = await store.calls.record(call(here, false));
      const passed = await store.calls.record(call(here, true));
      for (const callId of [failed, passed]) {
        await store.lessons.recordRecalls({
          callId,
          runId: 'SHOP-1-1',
          loop: 2,
          lessons: [{ lessonId: ids.mine, how: 'exact' }],
        });
      }
    } finally {
      await store.close();
    }
  });
  afterAll(async () => db?.dispose());

  it("lists this repository's and general lessons with recalls and passes; --all every one", () => {
    const r = run('lessons');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+SCOPE\s+REPOSITORY\s+RECALLED\s+PASSED\s+RESOLVED\s+LESSON$/);
    expect(lines.slice(1).map((l) => Number(l.split(/\s+/)[0]))).toEqual([ids.general, ids.mine]);
    const mine = lines.find((l) => l.startsWith(`${ids.mine} `)) ?? '';
    expect(mine).toMatch(
      new RegExp(`^${ids.mine}\\s+repo\\s+shop\\S*\\s+2\\s+1\\s+\\d{4}-\\d\\d-\\d\\d\\s+When redis refuses`),
    );
    expect(mine).toContain('…');
    const all = run('lessons', '--all', '--json');
    expect(all.code, all.stderr).toBe(0);
    const listed = JSON.parse(all.stdout).lessons.map((l: { id: number }) => l.id);
    expect(listed.sort()).toEqual(Object.values(ids).sort());
  });

  it('shows one lesson in full', () => {
    const r = run('lessons', 'show', String(ids.mine));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('When redis refuses connections, start it in the setup command, because tests need it.');
    expect(r.stdout).toMatch(/recalled\s+2 time\(s\); the loop then passed 1 time\(s\)/);
    expect(r.stdout).toContain('by me@example.com');
  });

  it('rescopes and forgets: a forgotten lesson leaves the list, --all still shows it', () => {
    let r = run('lessons', 'scope', String(ids.theirs), 'general');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`lesson ${ids.theirs} is now scoped general\n`);
    expect(run('lessons').stdout).toMatch(new RegExp(`^${ids.theirs}\\s+general`, 'm'));
    r = run('lessons', 'forget', String(ids.mine));
    expect(r.code, r.stderr).toBe(0);
    expect(run('lessons').stdout).not.toMatch(new RegExp(`^${ids.mine}\\s`, 'm'));
    expect(run('lessons', '--all').stdout).toMatch(new RegExp(`^${ids.mine}\\s+repo \\(forgotten\\)`, 'm'));
  });

  it('refuses a bad id, an unknown lesson and a bad scope with one line and a non-zero exit', () => {
    for (const [args, says] of [
      [['lessons', 'show', 'abc'], "'abc' is not a lesson id"],
      [['lessons', 'forget', '0'], "'0' is not a lesson id"],
      [['lessons', 'show', '999999'], 'there is no lesson 999999'],
      [
        ['lessons', 'scope', String(ids.general), 'everywhere'],
        "'everywhere' is not a lesson scope: use one of general, repo, none",
      ],
      [['lessons', 'scope', '999999', 'repo'], 'there is no lesson 999999'],
    ] as const) {
      const r = run(...args);
      expect(r.code, `${args.join(' ')}: ${r.stdout}`).not.toBe(0);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toContain(says);
    }
  });
});
