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
  type Scenario,
  startRig,
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
      loops: [doCheckpoint(sc.ticket, 2)],
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
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatch(new RegExp(`^chalk\\(${sc.ticket}\\): continue, loop \\d+$`));
    expect(r.lines.filter((l) => / started$/.test(l))).toHaveLength(1);
    expect(sc.originBranches()).toEqual(['main', tutoring]);
    const [request] = requests(sc);
    expect(request?.argv).toEqual(expect.arrayContaining(['--head', tutoring]));
    expect(request?.stdin).toContain('Human interventions (office hours): 1');
    expect(await ticketState(rig, sc)).toBe('submitted');
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });

  it('with nothing committed tells the distiller so; a none answer keeps the note here only; nothing open opens the request even with CHALK_AUTO_MR off', async () => {
    const sc = makeScenario({ checkpoints: 1 });
    await detainedByStray(rig, sc);
    rig.script({ lessons: [[s.answer({ lesson: '', scope: 'none' })]] });
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
    // No loop: every checkpoint was ticked; the request is opened because a person asked.
    expect(rig.seen.map((x) => x.kind)).toEqual(['lesson']);
    expect(requests(sc)).toHaveLength(1);
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
});
