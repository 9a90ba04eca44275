import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  explain,
  makeScenario,
  type Rig,
  RUBRIC,
  type Scenario,
  sampleSpec,
  startRig,
  tick,
  ticketState,
} from './harness.js';

/**
 * Getting out of detention, end to end (the built CLI, the real sandbox, the
 * real `claude` CLI against the scripted model, the fake forge): a stray file
 * breaks the rubric, the run is detained, the person fixes it on the detention
 * branch and runs office hours; the distiller's lesson is recorded with its
 * scope and the work continues on tutoring/... to a request.
 */
const available = await e2eAvailable();

const STRAY = 'tests/scratch_test.sh';
/** Checkpoint `n` done properly, plus a leftover debugging test that always fails. */
const strayLoop = (ticket: string, n: 1 | 2) => [
  s.write(`/work/repo/${STRAY}`, 'echo "debugging leftover"; exit 1\n'),
  ...doCheckpoint(ticket, n),
];

interface LessonRow {
  scope: string | null;
  lesson: string | null;
  resolution: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  signature: string;
}
const lessons = (rig: Rig, sc: Scenario) =>
  rig.sql<LessonRow>(
    'SELECT scope, lesson, resolution, resolved_by, resolved_at, signature FROM lessons WHERE repo = $1 AND ticket = $2 ORDER BY id',
    [sc.repo, sc.ticket],
  );

/** Runs the ticket into detention by the stray file; returns the detention branch, checked out as the person does. */
async function detainedByStray(rig: Rig, sc: Scenario): Promise<string> {
  rig.script({ loops: [strayLoop(sc.ticket, 1)] });
  const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '0' } });
  expect(r.code, explain(r)).toBe(3);
  const [branch] = sc.branches('detention/');
  if (!branch) throw new Error(`no detention branch\n${explain(r)}`);
  sc.git('switch', '--quiet', branch);
  return branch;
}

const lessonPrompt = (rig: Rig) => rig.seen.filter((x) => x.kind === 'lesson').map((x) => x.prompt);
const requests = (sc: Scenario) => sc.forge.calls().filter((c) => c.argv[0] === 'pr' && c.argv[1] === 'create');

describe.skipIf(!available)('chalk office-hours, end to end', { timeout: 400_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('records the distilled lesson with its scope, resumes the loop on tutoring/ and opens a request', async () => {
    const sc = makeScenario();
    const branch = await detainedByStray(rig, sc);
    sc.git('rm', '--quiet', STRAY);
    sc.git('commit', '--quiet', '-m', 'remove the leftover debugging test');
    const fixed = sc.git('rev-parse', 'HEAD');

    const lesson =
      'When a debugging test is left in tests/, delete it before finishing, because the rubric runs every test.';
    rig.script({
      // The failed attempt's tick is put back: a loop ticks checkpoint 1 (its work is there), then 2.
      loops: [[tick(sc.ticket), s.loopDone('1', 'greet.sh was already there')], doCheckpoint(sc.ticket, 2)],
      lessons: [[s.answer({ lesson, scope: 'general' })]],
    });
    const note = 'a leftover scratch test failed the rubric; I deleted it';
    const r = await chalk(rig, sc, ['office-hours', '-m', note], {
      env: { CHALK_DISTILL: 'true', CHALK_SPEC_CHECK: 'false', CHALK_REVIEW: 'false' },
    });
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);

    // The distiller saw the failure, the note and the fix as host git described it.
    const [prompt] = lessonPrompt(rig);
    expect(prompt).toContain(note);
    expect(prompt).toContain(`FAIL ${STRAY}`);
    expect(prompt).toContain('1 commit since the detention');
    expect(prompt).toContain(`${STRAY} | 1 -`);
    expect(prompt).toContain('-echo "debugging leftover"; exit 1');

    // The lesson, resolved with its scope, who and when.
    const [row] = await lessons(rig, sc);
    expect(row).toMatchObject({ scope: 'general', lesson, resolution: note, resolved_by: 'sam@example.com' });
    expect(row?.resolved_at).not.toBeNull();
    expect(r.lines).toContain(`lesson: ${lesson}`);
    const distill = (await calls(rig, sc)).filter((c) => c.kind === 'distill');
    expect(distill.map((c) => [c.loop, c.agent_status])).toEqual([[0, 'ok']]);

    // Work went on from the fix on tutoring/..., the detention branch untouched, to a request.
    const [tutoring] = sc.branches('tutoring/');
    expect(tutoring).toMatch(new RegExp(`^tutoring/${sc.ticket}-\\d+$`));
    expect(r.lines).toContain(`lesson recorded; continuing on ${tutoring}`);
    expect(sc.git('rev-parse', branch)).toBe(fixed);
    const resumed = sc.subjects(`${tutoring}`, fixed);
    expect(resumed).toEqual([
      expect.stringMatching(new RegExp(`^chalk\\(${sc.ticket}\\): continue, loop \\d+$`)),
      expect.stringMatching(new RegExp(`^chalk\\(${sc.ticket}\\): continue, loop \\d+$`)),
      `chalk(${sc.ticket}): grading files back as the run had them`,
    ]);
    expect(r.lines.filter((l) => / started$/.test(l))).toHaveLength(2);
    expect(sc.originBranches()).toEqual(['main', tutoring]);
    const [request] = requests(sc);
    expect(request?.argv).toEqual(expect.arrayContaining(['--head', tutoring]));
    expect(request?.stdin).toContain('Human interventions (office hours): 1');
    expect(await ticketState(rig, sc)).toBe('submitted');
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });

  it('with nothing committed tells the distiller so; a none answer keeps the note here only; the tick is put back and the run stops ready with CHALK_AUTO_MR off', async () => {
    const sc = makeScenario({ checkpoints: 1 });
    await detainedByStray(rig, sc);
    rig.script({
      lessons: [[s.answer({ lesson: '', scope: 'none' })]],
      loops: [[s.bash(`rm ${STRAY}`), tick(sc.ticket), s.loopDone('1', 'removed the stray test')]],
    });
    const note = 'the CI runner image was stale; rebuilt it outside this repository';
    const r = await chalk(rig, sc, ['office-hours', '-m', note], {
      env: { CHALK_DISTILL: 'true', CHALK_AUTO_MR: 'false' },
    });
    expect(r.code, explain(r)).toBe(0);
    const [prompt] = lessonPrompt(rig);
    expect(prompt).toContain('Nothing in the repository changed since the detention');
    expect(prompt).not.toContain('Diffstat');
    const [row] = await lessons(rig, sc);
    expect(row).toMatchObject({ scope: 'none', lesson: null, resolution: note });
    expect(r.lines).toContain(
      'no lesson distilled: the fix does not support a rule for other tickets; your note is kept as the fix and recalled in this repository only',
    );
    // The failed attempt's tick was put back: the spec check, a loop, the review, and ready (no request).
    expect(rig.seen.map((x) => x.kind)).toEqual(['lesson', 'spec', 'loop', 'review']);
    expect(requests(sc)).toEqual([]);
    expect(await ticketState(rig, sc)).toBe('done');
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
  it('puts back what the parked attempt changed in its grading, then runs the rubric and the review before the request', async () => {
    // The rubric is the repository's own: .chalk/config, not the environment.
    const own = { CHALK_TEST_CMD: undefined, CHALK_SPEC_CHECK: 'false' };
    const sc = makeScenario({ checkpoints: 1, files: { '.chalk/config': `CHALK_TEST_CMD=${RUBRIC}\n` } });
    // The attacker: a rubric that always passes, a CI gate of its own, the box ticked, a stray file, a typo.
    rig.script({
      loops: [
        [
          s.write('/work/repo/.chalk/config', 'CHALK_TEST_CMD=true\n'),
          s.write('/work/repo/.github/workflows/chalk.yml', 'on: push\njobs: {}\n'),
          s.write('/work/repo/tests/greet_test.sh', '[ "$(sh greet.sh)" = "hello" ]\n'),
          s.write('/work/repo/greet.sh', 'echo helo\n'),
          s.write('/work/repo/notes/stray.txt', 'left behind\n'),
          tick(sc.ticket),
          s.loopDone('1', 'all done'),
        ],
      ],
    });
    const detained = await chalk(rig, sc, ['run'], { env: { ...own, CHALK_MAX_RETRIES: '0' } });
    expect(detained.code, explain(detained)).toBe(3);
    const [branch] = sc.branches('detention/');
    sc.git('switch', '--quiet', branch as string);
    // The person's one-line fix.
    writeFileSync(join(sc.root, 'greet.sh'), 'echo hello\n');
    sc.git('commit', '--quiet', '-am', 'greet.sh says hello');

    rig.script({ loops: [[tick(sc.ticket), s.loopDone('1', 'greet.sh prints hello')]] });
    const r = await chalk(rig, sc, ['office-hours', '-m', 'a typo in greet.sh'], { env: own });
    expect(r.code, explain(r)).toBe(0);
    const [tutoring] = sc.branches('tutoring/');
    expect(r.lines, explain(r)).toContain(
      `the parked attempt changed what grades it; put back as the run had them: .chalk/config, .github/workflows/chalk.yml, specs/${sc.ticket}.md`,
    );
    // A loop ticked the box again under the repository's own rubric, then the review, then the request.
    expect(rig.seen.map((x) => x.kind)).toEqual(['loop', 'review']);
    const rows = await calls(rig, sc);
    expect(rows.at(-2)).toMatchObject({ kind: 'continue', rubric_exit: 0, progressed: true });
    expect(rows.at(-1)).toMatchObject({ kind: 'review', agent_status: 'pass' });
    const [request] = requests(sc);
    expect(request?.argv).toEqual(expect.arrayContaining(['--head', tutoring]));
    // What was pushed holds the run's grading files and the person's fix; the stray file is there for the review.
    const pushed = (path: string) =>
      execFileSync('git', ['show', `${tutoring}:${path}`], { cwd: sc.origin, encoding: 'utf8', stdio: 'pipe' });
    expect(pushed('.chalk/config')).toBe(`CHALK_TEST_CMD=${RUBRIC}\n`);
    expect(pushed('greet.sh')).toBe('echo hello\n');
    expect(pushed('notes/stray.txt')).toBe('left behind\n');
    expect(() => pushed('.github/workflows/chalk.yml')).toThrow();
    sc.dispose();
  });

  it('a later ticket that fails the same way gets the lesson in its prompt: in the same repository, in another only while general, never once forgotten', async () => {
    // The lesson, from a real detention and office hours in repository A.
    const a = makeScenario({ checkpoints: 1 });
    await detainedByStray(rig, a);
    a.git('rm', '--quiet', STRAY);
    a.git('commit', '--quiet', '-m', 'remove the leftover debugging test');
    const lesson = 'When a scratch test is left under tests/, delete it before finishing: the rubric runs every test.';
    rig.script({
      lessons: [[s.answer({ lesson, scope: 'general' })]],
      loops: [[tick(a.ticket), s.loopDone('1', 'greet.sh was already there')]],
    });
    const oh = await chalk(rig, a, ['office-hours', '-m', 'deleted the scratch test'], {
      env: { CHALK_DISTILL: 'true', CHALK_REVIEW: 'false' },
    });
    expect(oh.code, explain(oh)).toBe(0);
    const [row] = await rig.sql<{ id: string; scope: string }>(
      'SELECT id, scope FROM lessons WHERE repo = $1 AND resolved_at IS NOT NULL',
      [a.repo],
    );
    expect(row?.scope).toBe('general');
    const id = String(row?.id);

    /** A new ticket on `sc`'s repository whose first loop leaves the same stray test; the retry's prompt. */
    const retryPrompt = async (sc: Scenario, ticket: string): Promise<string> => {
      sc.git('switch', '--quiet', '-c', `chalk/${ticket}`, 'main');
      mkdirSync(join(sc.root, 'specs'), { recursive: true });
      writeFileSync(join(sc.root, 'specs', `${ticket}.md`), sampleSpec(ticket, { checkpoints: 1 }));
      sc.git('add', '-A');
      sc.git('commit', '--quiet', '-m', `chalk(${ticket}): spec`);
      rig.script({ loops: [strayLoop(ticket, 1), strayLoop(ticket, 1)] });
      const before = rig.seen.length;
      const r = await chalk(rig, { ...sc, ticket }, ['run'], {
        env: { CHALK_SPEC_CHECK: 'false', CHALK_MAX_RETRIES: '1' },
      });
      expect(r.code, explain(r)).toBe(3);
      // The second loop is the retry (the first failed on the stray test).
      const retry = rig.seen.slice(before).filter((x) => x.kind === 'loop')[1];
      if (!retry) throw new Error(`no retry call\n${explain(r)}`);
      return retry.prompt;
    };

    // Same repository: the retry is given the lesson (the same first error).
    const same = await retryPrompt(a, 'SHOP-2');
    expect(same).toContain('<lessons>');
    expect(same).toContain(`Fix: ${lesson}`);
    // Recorded with the loop: the count, and this lesson among those given. This rubric names no
    // test (no fingerprint), so the lesson is found by its first error, the lexical rung.
    const given = await rig.sql<{ lessons: number; lesson_id: string; how: string }>(
      `SELECT r.lessons, l.lesson_id, l.how FROM runs r JOIN lesson_recalls l ON l.call_id = r.id
       WHERE r.repo = $1 AND r.ticket = 'SHOP-2' AND r.kind = 'retry'`,
      [a.repo],
    );
    expect(given.map((g) => [String(g.lesson_id), g.how])).toContainEqual([id, 'lexical']);
    expect(given[0]?.lessons).toBe(given.length);

    // Another repository: given while the scope is general, not once it is this repository's.
    const b = makeScenario({ checkpoints: 1 });
    expect(await retryPrompt(b, 'SHOP-3')).toContain(`Fix: ${lesson}`);
    const scoped = await chalk(rig, a, ['lessons', 'scope', id, 'repo']);
    expect(scoped.code, explain(scoped)).toBe(0);
    expect(await retryPrompt(b, 'SHOP-4')).not.toContain(lesson);

    // Forgotten: no prompt gets it, not even in its own repository.
    const forgot = await chalk(rig, a, ['lessons', 'forget', id]);
    expect(forgot.code, explain(forgot)).toBe(0);
    expect(await retryPrompt(a, 'SHOP-5')).not.toContain(lesson);
    expect(rig.model.violations).toEqual([]);
    a.dispose();
    b.dispose();
  });
});
