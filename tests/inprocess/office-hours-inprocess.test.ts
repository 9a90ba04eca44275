import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../core/errors.js';
import { fleetPaths, runPaths } from '../../core/layout.js';
import type { LoopKind } from '../../core/ports/agent.js';
import { pidFileText } from '../../core/process/pid.js';
import { repoKey } from '../../core/repo/git.js';
import { submitTicket } from '../../core/run/endings/submit.js';
import { officeHours } from '../../core/run/office-hours/office-hours.js';
import { LESSON_MAX_CHARS } from '../../core/run/office-hours/office-hours-rules.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  makeTicketRepo,
  RecordingForge,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TestKernel,
} from '../../core/testing/index.js';
import forgeGithub from '../../plugins/forge-github/index.js';
import forgeGitlab from '../../plugins/forge-gitlab/index.js';

/**
 * Office hours and submit in-process, through the testing kernel (temp-dir
 * sandbox, scripted agent, memory store, recording forge), with real host git:
 * a run detained by a stray file, the person's fix on the detention branch,
 * the distiller's answer, the lesson resolved, the work continued on tutoring/.
 */

const TICKET = 'PROJ-1';
const SPEC = `specs/${TICKET}.md`;
afterEach(removeTicketRepos);

const spec = (ticked: boolean[]) =>
  `# ${TICKET}: greet\n\n${ticked.map((t, i) => `- [${t ? 'x' : ' '}] step ${i + 1}`).join('\n')}\n`;

interface Repo {
  root: string;
  env: NodeJS.ProcessEnv;
  git(...args: string[]): string;
}

/** On chalk/PROJ-1 with its spec; the rubric fails while `stray.txt` exists. */
function makeRepo(config: Record<string, string>, checkpoints: number): Repo {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-office-',
    user: { name: 'Pat', email: 'pat@example.com' },
    rubric: 'if [ -e stray.txt ]; then echo "FAIL stray.txt breaks the build"; exit 1; fi\n',
    spec: spec(Array.from({ length: checkpoints }, () => false)),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_MAX_RETRIES: '0', ...config },
  });
}

/** Ticks the first `n` of `total` checkpoints, and leaves a stray file when `stray`. */
const work =
  (n: number, total: number, stray: boolean): AgentStep<LoopKind> =>
  async (c) => {
    if (stray) await c.write('stray.txt', 'left behind\n');
    await c.write(SPEC, spec(Array.from({ length: total }, (_, i) => i < n)));
    return { answer: { status: 'done', summary: `did ${n}` } };
  };

/**
 * Runs the ticket to detention and switches to the detention branch, as the person does. The
 * built-in forges are offered as the CLI offers them: the guard keeps their gate files.
 */
async function detainAndSwitch(repo: Repo, agent: ScriptedAgent): Promise<{ t: TestKernel; branch: string }> {
  // The built-in forges are offered for the gate files they guard; the recording forge still opens the requests.
  const t = await createTestKernel({
    root: repo.root,
    env: repo.env,
    agent,
    plugins: [forgeGithub, forgeGitlab],
    forge: new RecordingForge(),
  });
  const r = await runTicket(t.deps(), { root: repo.root });
  expect(r.exitCode, t.log.text()).toBe(3);
  if (r.outcome.kind !== 'detained') throw new Error('not detained');
  repo.git('switch', '--quiet', r.outcome.branch);
  return { t, branch: r.outcome.branch };
}

const distillCalls = (agent: ScriptedAgent) => agent.calls.filter((c) => c.kind === 'distill');

/** The loop after office hours: the stray file gone, every checkpoint ticked (the put-back spec had them open). */
const finishes =
  (total: number): AgentStep<LoopKind> =>
  async (c) => {
    await c.exec('rm -f stray.txt');
    await c.write(SPEC, spec(Array.from({ length: total }, () => true)));
    return { answer: { status: 'done', summary: 'finished' } };
  };

describe('office hours in-process', { timeout: 30_000 }, () => {
  it('distils the fix, resolves the lesson, and resumes the loop on tutoring/ to a request', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'true' }, 2);
    const hostile = `When a stray \u001b[2J\u001b]0;pwned\u0007file breaks check.sh,\r\n delete it. ${'x'.repeat(3000)}`;
    const agent = new ScriptedAgent()
      .script('continue', work(1, 2, true), work(2, 2, false))
      .script('distill', async (c) => {
        // A distiller that tries to change the repository: nothing of its sandbox comes home.
        await c.exec('echo evil > evil.txt && git add -A && git commit -qm "evil" && git branch -f main HEAD');
        return { answer: { lesson: hostile, scope: 'repo' } };
      })
      .script('review', () => ({ answer: { verdict: 'pass', summary: 'ok', findings: [] } }));
    const { t, branch } = await detainAndSwitch(repo, agent);
    const parked = repo.git('rev-parse', branch);
    repo.git('rm', '--quiet', 'stray.txt');
    repo.git('commit', '--quiet', '-m', 'remove the stray file');
    const fixed = repo.git('rev-parse', 'HEAD');

    const r = await officeHours(t.deps(), { root: repo.root, note: 'stray.txt broke the rubric; removed it' });
    expect(r.exitCode, t.log.text()).toBe(0);

    // What the distiller was given: the failure, the note, the fix as host git saw it.
    const [call] = distillCalls(agent);
    expect(call?.prompt).toContain('<engineer_note>');
    expect(call?.prompt).toContain('stray.txt broke the rubric; removed it');
    expect(call?.prompt).toContain('FAIL stray.txt breaks the build');
    expect(call?.prompt).toContain('1 commit since the detention');
    expect(call?.prompt).toContain('-left behind');
    // The lesson: cleaned (no control character, one line, capped) and scoped.
    const lesson = t.store.tables.lessons[0];
    expect(lesson).toMatchObject({ resolution: 'stray.txt broke the rubric; removed it', scope: 'repo' });
    expect(lesson?.resolvedBy).toBe('pat@example.com');
    expect(lesson?.resolvedAt).not.toBeNull();
    expect(lesson?.lesson).toMatch(/^When a stray file breaks check\.sh, delete it\. x+…$/);
    expect(lesson?.lesson?.length).toBe(LESSON_MAX_CHARS);
    expect(t.log.text()).toContain('lesson, recalled in this repository only: When a stray file breaks');
    expect(t.log.text()).not.toContain('\u001b');
    // The distill call is recorded like the others.
    expect(t.store.callsOf(TICKET).find((c) => c.kind === 'distill')).toMatchObject({ agentStatus: 'ok', loop: 0 });

    // Work goes on from the detention branch's HEAD on tutoring/; the detention branch is as it was.
    expect(r.ctx.branch).toMatch(new RegExp(`^tutoring/${TICKET}-\\d+$`));
    expect(repo.git('rev-parse', branch)).toBe(fixed);
    expect(repo.git('rev-parse', `${branch}~1`)).toBe(parked);
    expect(repo.git('merge-base', '--is-ancestor', fixed, r.ctx.branch)).toBe('');
    expect(repo.git('ls-tree', '-r', '--name-only', r.ctx.branch)).not.toContain('evil.txt');
    expect(repo.git('log', '--format=%s', '--all')).not.toContain('evil');
    expect(t.log.text()).toContain(`lesson recorded; continuing on ${r.ctx.branch}`);
    expect(r.next.kind).toBe('run');
    expect(t.forge.requests).toHaveLength(1);
    expect(t.forge.requests[0]).toMatchObject({ branch: r.ctx.branch });
    expect(t.forge.requests[0]?.body).toContain('Human interventions (office hours): 1');
  });

  it('with nothing committed tells the distiller so; a none answer keeps the note here only; the ticks of the failed attempt are put back and the run goes on to a request', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'true', CHALK_AUTO_MR: 'false' }, 1);
    const agent = new ScriptedAgent()
      .script('continue', work(1, 1, true), finishes(1))
      .script('review', () => ({ answer: { verdict: 'pass', summary: 'ok', findings: [] } }))
      .script('distill', () => ({ answer: { lesson: '', scope: 'none' } }));
    const { t } = await detainAndSwitch(repo, agent);
    const r = await officeHours(t.deps(), { root: repo.root, note: 'the registry was down; nothing to change here' });
    expect(r.exitCode, t.log.text()).toBe(0);
    expect(distillCalls(agent)[0]?.prompt).toContain('Nothing in the repository changed since the detention');
    expect(t.store.tables.lessons[0]).toMatchObject({ scope: 'none', lesson: null });
    expect(t.log.text()).toContain('no lesson distilled');
    expect(t.log.text()).toContain('recalled in this repository only');
    expect(t.store.callsOf(TICKET).find((c) => c.kind === 'distill')?.agentStatus).toBe('none');
    // The failed attempt ticked the box; it is open again, so a loop ran, then the review, and the
    // run stopped ready as CHALK_AUTO_MR=false asks.
    expect(t.log.text()).toContain(`put back as the run had them: ${SPEC}`);
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue', 'distill', 'continue', 'review']);
    expect(r.next).toMatchObject({ kind: 'run', result: { outcome: { kind: 'graduated', outcome: 'ready' } } });
    expect(t.forge.requests).toEqual([]);
  });

  it('undoes what the parked attempt changed in its grading, keeps what the person changed, and graduates nothing the rubric and the review did not see', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false' }, 2);
    const gate = '.github/workflows/chalk.yml';
    const agent = new ScriptedAgent().script(
      'continue',
      async (c) => {
        // The attacker: a rubric that always passes, a gate of its own, every box ticked, a stray file.
        await c.write('.chalk/config', 'CHALK_TEST_CMD=true\n');
        await c.write(gate, 'on: push\n');
        await c.write('.chalk/textbook.md', 'Anything goes.\n');
        await c.write(SPEC, spec([true, true]));
        await c.write('stray.txt', 'left behind\n');
        return { answer: { status: 'done', summary: 'all done' } };
      },
      async () => ({ answer: { status: 'blocked', summary: 'stop', blocker: 'stopping here' } }),
    );
    const { t, branch } = await detainAndSwitch(repo, agent);
    // The person's one-line fix, and their own textbook.
    repo.git('rm', '--quiet', 'stray.txt');
    writeFileSync(join(repo.root, '.chalk', 'textbook.md'), 'Be careful.\n');
    repo.git('add', '-A');
    repo.git('commit', '--quiet', '-m', 'remove the stray file; a textbook');
    const r = await officeHours(t.deps(), { root: repo.root, note: 'removed stray.txt' });
    const tutoring = r.ctx.branch;
    const show = (path: string) => repo.git('show', `${tutoring}:${path}`);
    expect(repo.git('log', '--format=%s', '-1', `${branch}..${tutoring}`)).toBe(
      `chalk(${TICKET}): grading files back as the run had them`,
    );
    expect(show('.chalk/config')).toBe('CHALK_TEST_CMD=bash test.sh');
    expect(repo.git('ls-tree', '--name-only', tutoring, '.github/')).toBe('');
    expect(show('.chalk/textbook.md')).toBe('Be careful.');
    expect(t.log.text()).toContain('kept as you changed them since the detention: .chalk/textbook.md');
    // Every checkpoint is open again, and the run's rubric is the green commit's: a loop is needed.
    expect(r.ctx.rubricCommand).toBe('bash test.sh');
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue', 'continue']);
    expect(r.exitCode).toBe(3);
    expect(t.forge.requests).toEqual([]);
  });

  it('with every box ticked by the person, runs the rubric and the review before the request, whatever CHALK_AUTO_MR says', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false' }, 1);
    const agent = new ScriptedAgent()
      .script('continue', work(0, 1, true))
      .script('review', () => ({ answer: { verdict: 'pass', summary: 'ok', findings: [] } }));
    const { t } = await detainAndSwitch(repo, agent);
    repo.git('rm', '--quiet', 'stray.txt');
    writeFileSync(join(repo.root, SPEC), spec([true]));
    repo.git('commit', '--quiet', '-am', 'removed the stray file; the checkpoint is done');
    const r = await officeHours(t.deps(), { root: repo.root, note: 'removed stray.txt' });
    expect(r.exitCode, t.log.text()).toBe(0);
    expect(t.log.text()).toContain(`rubric on ${r.ctx.branch} as it stands, before the review: exit 0`);
    expect(agent.calls.map((c) => c.kind)).toEqual(['continue', 'review']);
    expect(t.forge.requests).toHaveLength(1);
  });

  it('with distillation off keeps the note as the fix for this repository, and a bad answer does the same', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' }, 1);
    const agent = new ScriptedAgent().script('continue', work(1, 1, true), finishes(1));
    const { t } = await detainAndSwitch(repo, agent);
    await officeHours(t.deps(), { root: repo.root, note: 'fixed the image' });
    expect(distillCalls(agent)).toEqual([]);
    expect(t.store.tables.lessons[0]).toMatchObject({ scope: 'repo', lesson: null, resolution: 'fixed the image' });
    expect(t.log.text()).toContain('no lesson distilled (CHALK_DISTILL is off)');

    const repo2 = makeRepo({ CHALK_DISTILL: 'true', CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' }, 1);
    const agent2 = new ScriptedAgent()
      .script('continue', work(1, 1, true), finishes(1))
      .script('distill', () => ({ answer: { lesson: 'x', scope: 'everywhere' } as never }));
    const { t: t2 } = await detainAndSwitch(repo2, agent2);
    await officeHours(t2.deps(), { root: repo2.root, note: 'n' });
    expect(t2.store.tables.lessons[0]).toMatchObject({ scope: 'repo', lesson: null });
    expect(t2.log.text()).toContain('no lesson distilled (the distiller gave no usable answer)');
  });

  it('embeds the lesson it resolves when an Embedder answers, and resolves it without one when none does', async () => {
    const vector = Array.from({ length: 384 }, (_, i) => (i === 7 ? 1 : 0));
    const texts: string[][] = [];
    const repo = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' }, 1);
    const { t } = await detainAndSwitch(repo, new ScriptedAgent().script('continue', work(1, 1, true), finishes(1)));
    const embedder = {
      dimensions: 384,
      embed: async (batch: string[]) => {
        texts.push(batch);
        return batch.map(() => vector);
      },
    };
    await officeHours({ ...t.deps(), embedder: () => embedder }, { root: repo.root, note: 'fixed the image' });
    const id = t.store.tables.lessons[0]?.id as number;
    expect(texts).toEqual([['fixed the image']]);
    expect(t.store.tables.embeddings.get(id)).toEqual(vector);

    const repo2 = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' }, 1);
    const { t: t2 } = await detainAndSwitch(
      repo2,
      new ScriptedAgent().script('continue', work(1, 1, true), finishes(1)),
    );
    const down = {
      dimensions: 384,
      embed: async (): Promise<number[][]> => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:8472');
      },
    };
    const r = await officeHours({ ...t2.deps(), embedder: () => down }, { root: repo2.root, note: 'n' });
    expect(r.exitCode, t2.log.text()).toBe(0);
    const lesson = t2.store.tables.lessons[0];
    expect(lesson?.resolvedAt).not.toBeNull();
    expect(t2.store.tables.embeddings.size).toBe(0);
    expect(await t2.store.lessons.unembedded(10)).toEqual([{ id: lesson?.id, lesson: null, resolution: 'n' }]);
  });

  it('--detach starts the resumed run in the background on the tutoring branch', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false' }, 2);
    const agent = new ScriptedAgent().script('continue', work(1, 2, true));
    const { t } = await detainAndSwitch(repo, agent);
    const started: string[] = [];
    const r = await officeHours(t.deps(), {
      root: repo.root,
      note: 'removed the stray file',
      detach: true,
      detachRun: (ctx) => {
        started.push(ctx.branch);
        return 4242;
      },
    });
    expect(r.next).toEqual({ kind: 'detached', pid: 4242 });
    expect(started).toEqual([r.ctx.branch]);
    expect(r.ctx.branch).toMatch(/^tutoring\//);
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD')).toBe(r.ctx.branch);
    expect(t.log.text()).toContain(`running in the background (pid 4242); follow with: chalk logs ${TICKET} -f`);
    expect(agent.remaining()).toEqual({});
  });

  it("a fleet's ticket goes back into the fleet's queue while its supervisor lives, and runs here once it is gone", async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false' }, 2);
    const agent = new ScriptedAgent().script('continue', work(1, 2, true));
    const { t, branch } = await detainAndSwitch(repo, agent);
    const paths = runPaths(repoKey(repo.root), TICKET, repo.env);
    writeFileSync(paths.fleet, 'PROJ-9\n');
    const supervisor = fleetPaths(repoKey(repo.root), 'PROJ-9', repo.env);
    mkdirSync(supervisor.dir, { recursive: true });
    writeFileSync(supervisor.pid, pidFileText(process.pid));
    const r = await officeHours(t.deps(), { root: repo.root, note: 'removed the stray file' });
    expect(r.next).toEqual({ kind: 'rejoined', epic: 'PROJ-9' });
    expect(readFileSync(paths.rejoin, 'utf8')).toBe(`${r.ctx.branch}\n`);
    expect(t.log.text()).toContain(
      `back in fleet PROJ-9's queue: its supervisor runs ${TICKET} again when a slot frees`,
    );
    expect(agent.calls.filter((c) => c.kind === 'continue')).toHaveLength(1);

    // A second visit after the supervisor is gone: nobody serves the queue, so it runs here.
    rmSync(paths.rejoin);
    repo.git('switch', '--quiet', branch);
    rmSync(supervisor.pid);
    const again = new ScriptedAgent().script('continue', work(2, 2, false)).script('review', async () => ({
      answer: { verdict: 'pass', summary: 'fine', findings: [] },
    }));
    const t2 = await createTestKernel({ root: repo.root, env: repo.env, agent: again });
    const r2 = await officeHours(t2.deps(), { root: repo.root, note: 'removed it again' });
    expect(r2.next.kind).toBe('run');
    expect(existsSync(paths.rejoin)).toBe(false);
  });

  it('an interrupted distillation is recorded as such, and nothing is resolved or switched', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'true' }, 1);
    const controller = new AbortController();
    const agent = new ScriptedAgent().script('continue', work(1, 1, true)).script('distill', (c) => {
      controller.abort(new Error('interrupted by SIGINT'));
      throw c.signal?.reason;
    });
    const { t, branch } = await detainAndSwitch(repo, agent);
    const recorded: Promise<void>[] = [];
    await expect(
      officeHours(t.deps(), {
        root: repo.root,
        note: 'n',
        signal: controller.signal,
        onInterrupt: (p) => recorded.push(p),
      }),
    ).rejects.toThrow('interrupted by SIGINT');
    await Promise.all(recorded);
    expect(recorded).toHaveLength(1);
    expect(
      t.store
        .callsOf(TICKET)
        .filter((c) => c.kind === 'distill')
        .map((c) => c.agentStatus),
    ).toEqual(['interrupted']);
    expect(t.store.tables.lessons[0]?.resolvedAt).toBeNull();
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD')).toBe(branch);
    expect(t.sandbox.openSessions()).toEqual([]);
  });

  it('refuses off a detention branch, without a note, and with uncommitted changes, changing nothing', async () => {
    const repo = makeRepo({}, 1);
    const agent = new ScriptedAgent().script('continue', work(1, 1, true));
    const { t, branch } = await detainAndSwitch(repo, agent);
    const refusal = (note: string | undefined) =>
      officeHours(t.deps(), { root: repo.root, note }).then(
        () => 'accepted',
        (e: unknown) => (e instanceof UserError ? e.message : `not a UserError: ${String(e)}`),
      );
    expect(await refusal('  ')).toMatch(/^a note is required: chalk office-hours -m/);
    expect(await refusal(undefined)).toMatch(/^a note is required/);
    writeFileSync(join(repo.root, 'wip.txt'), 'x');
    expect(await refusal('n')).toMatch(/^uncommitted changes/);
    rmSync(join(repo.root, 'wip.txt'));
    repo.git('switch', '--quiet', `chalk/${TICKET}`);
    expect(await refusal('n')).toMatch(
      /^chalk office-hours runs on a detention\/\* branch \(this is 'chalk\/PROJ-1'\)/,
    );
    // Another detention branch than the one the ticket's detention record names.
    repo.git('switch', '--quiet', '-c', 'detention/PROJ-1-1', branch);
    expect(await refusal('n')).toBe(
      `the open detention of ${TICKET} is ${branch}, not detention/PROJ-1-1: git switch to it, commit your fix there, then run chalk office-hours again`,
    );
    expect(t.store.tables.lessons[0]?.resolvedAt).toBeNull();
    expect(repo.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/tutoring/')).toBe('');
    expect(repo.git('rev-parse', '--abbrev-ref', 'HEAD')).toBe('detention/PROJ-1-1');
  });

  it('with the detention record gone, opens a lesson from what it knows and resolves that', async () => {
    const repo = makeRepo({ CHALK_DISTILL: 'false', CHALK_AUTO_MR: 'false', CHALK_REVIEW: 'false' }, 1);
    const agent = new ScriptedAgent().script('continue', work(1, 1, true), finishes(1));
    const { t, branch } = await detainAndSwitch(repo, agent);
    rmSync(join(repo.env.XDG_STATE_HOME as string), { recursive: true, force: true });
    const r = await officeHours(t.deps(), { root: repo.root, note: 'fixed' });
    expect(r.exitCode).toBe(0);
    const [first, second] = t.store.tables.lessons;
    expect(first?.resolvedAt).toBeNull();
    expect(second).toMatchObject({
      id: r.lessonId,
      signature: `detained on ${branch}`,
      resolution: 'fixed',
      scope: 'repo',
    });
  });
});

describe('chalk submit in-process', { timeout: 30_000 }, () => {
  it('refuses while checkpoints are open, then pushes and opens the request whatever CHALK_AUTO_MR says', async () => {
    const repo = makeRepo({ CHALK_AUTO_MR: 'false' }, 2);
    const t = await createTestKernel({ root: repo.root, env: repo.env });
    await expect(submitTicket(t.deps(), { root: repo.root })).rejects.toThrow(
      `${SPEC} has 2 open checkpoints; finish them (chalk run) or tick them, commit, then chalk submit`,
    );
    writeFileSync(join(repo.root, SPEC), spec([true, true]));
    repo.git('commit', '--quiet', '-am', 'done by hand');
    // Ticked by hand: no green rubric and no review saw it, so nothing is pushed or opened.
    const unseen = `no green rubric and review saw chalk/${TICKET} as it is (${repo.git('rev-parse', 'HEAD').slice(0, 12)}); run chalk run`;
    await expect(submitTicket(t.deps(), { root: repo.root })).rejects.toThrow(unseen);
    expect(t.forge.requests).toEqual([]);
    // chalk run with nothing open: the rubric on HEAD, then the review, then ready (CHALK_AUTO_MR=false).
    const agent = new ScriptedAgent().script('review', () => ({
      answer: { verdict: 'pass', summary: 'ok', findings: [] },
    }));
    const run = await createTestKernel({ root: repo.root, env: repo.env, agent });
    const r = await runTicket(run.deps(), { root: repo.root });
    expect(r.outcome, run.log.text()).toMatchObject({ kind: 'graduated', outcome: 'ready' });
    expect(run.log.text()).toContain(`rubric on chalk/${TICKET} as it stands, before the review: exit 0`);
    expect(agent.calls.map((c) => c.kind)).toEqual(['review']);
    const g = await submitTicket(t.deps(), { root: repo.root });
    expect(g.outcome).toBe('opened');
    expect(t.forge.requests[0]).toMatchObject({ branch: `chalk/${TICKET}`, base: 'main' });
    expect(repo.git('rev-parse', `origin/chalk/${TICKET}`)).toBe(repo.git('rev-parse', 'HEAD'));
    // A commit after what they saw: refused again.
    writeFileSync(join(repo.root, 'late.txt'), 'after the review\n');
    repo.git('add', 'late.txt');
    repo.git('commit', '--quiet', '-m', 'late');
    await expect(submitTicket(t.deps(), { root: repo.root })).rejects.toThrow(/^no green rubric and review saw/);
  });
});
