import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../core/store/index.js';
import { embedded } from '../integration/store/backends.js';
import {
  chalk,
  cleanEnv,
  doCheckpoint,
  e2eAvailable,
  explain,
  makeScenario,
  type Rig,
  runCli,
  type Scenario,
  startRig,
} from './harness.js';

/**
 * Another machine (its own state directory and embedded database, its own checkout of another
 * repository) with one general lesson, copied into the rig's server by `chalk db copy`.
 */
async function lessonFromAnotherMachine(rig: Rig, sc: Scenario, server: string): Promise<void> {
  const other = await embedded.fresh();
  try {
    const store = await PgStore.open(other.target, 120_000);
    await store.pool.query(
      `INSERT INTO lessons (repo, ticket, signature, first_error, resolution, lesson, resolved_by, resolved_at, scope)
       VALUES ('shop-0a1b2c3d', 'OLD-2', 'rubric failed (exit 1)', 'greet.sh prints hello', 'their note',
               'COPIED-FIX: keep the greeting on one line.', 'them', now(), 'general')`,
    );
    await store.close();
    const env = { ...cleanEnv(), XDG_STATE_HOME: other.env.XDG_STATE_HOME, CHALK_DATABASE_URL: '', TEAM_DB: server };
    const r = await runCli(['db', 'copy', '--to-env', 'TEAM_DB'], { cwd: sc.root, env, ticket: sc.ticket });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^lessons +1 added {2}0 already there$/m);
    expect(rig.state).not.toBe(other.env.XDG_STATE_HOME);
  } finally {
    await other.dispose();
  }
}

/**
 * Lessons end to end: the real CLI, container and `claude` CLI against the scripted model. A
 * loop's prompt (as the model received it) carries this repository's and `general` lessons that
 * match the spec, never another repository's own, a forgotten or an open one; the loop's row
 * counts them, lesson_recalls names them, and `chalk lessons` shows the loop then passed. With a
 * server (CI), one of them was written on another machine and brought there by `chalk db copy`.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('lessons, end to end', { timeout: 300_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('gives the first loop the lessons its spec recalls, within the scope rule, and records them', async () => {
    const sc = makeScenario({ checkpoints: 1 });
    // Any store command brings the schema up.
    const first = await chalk(rig, sc, ['lessons']);
    expect(first.code, explain(first)).toBe(0);
    const server = rig.env.CHALK_DATABASE_URL ?? '';
    if (server) await lessonFromAnotherMachine(rig, sc, server);
    const lesson = async (o: { repo: string; fix: string; scope: string; resolved?: boolean; forgotten?: boolean }) => {
      const [row] = await rig.sql<{ id: string }>(
        `INSERT INTO lessons (repo, ticket, signature, first_error, resolution, lesson, resolved_by, resolved_at, scope, forgotten_at)
         VALUES ($1, 'OLD-1', 'rubric failed (exit 1)', 'greet.sh prints hello', 'the note', $2, 'me',
                 CASE WHEN $3 THEN now() END, $4, CASE WHEN $5 THEN now() END) RETURNING id`,
        [o.repo, o.fix, o.resolved !== false, o.scope, o.forgotten === true],
      );
      return Number(row?.id);
    };
    const here = await lesson({ repo: sc.repo, fix: 'HERE-FIX: keep greet.sh one line.', scope: 'repo' });
    const general = await lesson({ repo: 'elsewhere', fix: 'GENERAL-FIX: print with echo.', scope: 'general' });
    await lesson({ repo: 'elsewhere', fix: 'THEIRS-FIX', scope: 'repo' });
    await lesson({ repo: sc.repo, fix: 'FORGOTTEN-FIX', scope: 'repo', forgotten: true });
    await lesson({ repo: sc.repo, fix: 'OPEN-FIX', scope: 'repo', resolved: false });

    rig.script({ loops: [doCheckpoint(sc.ticket, 1)] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    expect(r.code, explain(r)).toBe(0);
    const loop = rig.seen.find((x) => x.kind === 'loop')?.prompt ?? '';
    const block = /<lessons>\n([\s\S]*?)\n<\/lessons>/.exec(loop)?.[1] ?? '';
    // Equal scores: the newest first, so the copied lesson (copied before the others were written) is last.
    const copied = server
      ? ['- Seen before: rubric failed (exit 1)', '  Fix: COPIED-FIX: keep the greeting on one line.']
      : [];
    expect(block.split('\n')).toEqual([
      '- Seen before: rubric failed (exit 1)',
      '  Fix: GENERAL-FIX: print with echo.',
      '- Seen before: rubric failed (exit 1)',
      '  Fix: HERE-FIX: keep greet.sh one line.',
      ...copied,
    ]);
    for (const hidden of ['THEIRS-FIX', 'FORGOTTEN-FIX', 'OPEN-FIX']) expect(loop).not.toContain(hidden);

    const rows = await rig.sql<{ id: string; lessons: number }>(
      `SELECT id, lessons FROM runs WHERE repo = $1 AND ticket = $2 AND kind = 'continue'`,
      [sc.repo, sc.ticket],
    );
    expect(rows.map((x) => x.lessons)).toEqual([server ? 3 : 2]);
    const recalls = await rig.sql<{ call_id: string; loop: number; lesson_id: string; how: string }>(
      'SELECT call_id, loop, lesson_id, how FROM lesson_recalls ORDER BY lesson_id',
    );
    const [theirs] = server
      ? await rig.sql<{ id: string }>(`SELECT id FROM lessons WHERE lesson LIKE 'COPIED-FIX%' AND origin IS NOT NULL`)
      : [];
    expect(recalls.map((x) => [Number(x.call_id), x.loop, Number(x.lesson_id), x.how])).toEqual([
      ...(theirs ? [[Number(rows[0]?.id), 1, Number(theirs.id), 'lexical']] : []),
      [Number(rows[0]?.id), 1, here, 'lexical'],
      [Number(rows[0]?.id), 1, general, 'lexical'],
    ]);
    const listed = await chalk(rig, sc, ['lessons', '--json']);
    expect(listed.code, explain(listed)).toBe(0);
    const mine = JSON.parse(listed.stdout).lessons.find((l: { id: number }) => l.id === here);
    expect(mine).toMatchObject({ recalled: 1, passed: 1 });
    sc.dispose();
  });
});
