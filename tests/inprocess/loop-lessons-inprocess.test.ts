import { afterEach, describe, expect, it } from 'vitest';
import type { Plugin } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { RecallKey } from '../../core/ports/lesson-memory.js';
import type { LessonScope } from '../../core/ports/store.js';
import { repoName } from '../../core/repo/git.js';
import {
  type AgentStep,
  createTestKernel,
  MemoryStore,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TestKernel,
} from '../../core/testing/index.js';

/**
 * Lessons in the loop, in-process (testing kernel, no container): the built-in `lesson-memory`
 * plugin answers every loop prompt through `beforePrompt`, the prompt carries the `<lessons>`
 * block, the loop's row counts them and lesson_recalls names them; a plugin's LessonMemory
 * replaces the ladder; a failing store costs the run its lessons and one warning.
 */

const TICKET = 'PROJ-1';
const SPEC = `specs/${TICKET}.md`;
const FAIL_LINE = 'FAILED tests/test_done.py::test_done - AssertionError: done.txt is not ok';
afterEach(removeTicketRepos);

const spec = (ticked: boolean) => `# ${TICKET}: make done.txt\n\n- [${ticked ? 'x' : ' '}] write done.txt with ok\n`;

function makeRepo(): { root: string; env: NodeJS.ProcessEnv } {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-lessons-',
    rubric: `if grep -q '^ok$' done.txt 2>/dev/null && grep -q '^- \\[x\\]' ${SPEC}; then echo pass; exit 0; fi\necho '${FAIL_LINE}'; exit 1\n`,
    spec: spec(false),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_REVIEW: 'false', CHALK_MAX_RETRIES: '2' },
  });
}

const fail: AgentStep<LoopKind> = () => ({ answer: { status: 'done', summary: 'tried' } });
const fix: AgentStep<LoopKind> = async (c) => {
  await c.write('done.txt', 'ok\n');
  await c.write(SPEC, spec(true));
  return { answer: { status: 'done', summary: 'fixed' } };
};

async function seed(
  store: MemoryStore,
  o: { repo: string; signature: string; firstError?: string; fix: string; scope?: LessonScope },
) {
  const id = await store.lessons.open({
    repo: o.repo,
    ticket: 'OLD-1',
    signature: o.signature,
    firstError: o.firstError ?? null,
  });
  await store.lessons.resolve({
    id,
    resolution: 'the note',
    lesson: o.fix,
    resolvedBy: 'me',
    scope: o.scope ?? 'repo',
  });
  return id;
}

const lessonsBlock = (prompt: string) => /<lessons>\n([\s\S]*?)\n<\/lessons>/.exec(prompt)?.[1] ?? null;

/** A repository and the key its rows are filed under, before the kernel boots. */
async function repository() {
  const repo = makeRepo();
  return { repo, key: await repoName(repo.root) };
}

const run = (t: TestKernel, root: string) => runTicket(t.deps(), { root });

describe('lessons in the loop', { timeout: 30_000 }, () => {
  it('asks the LessonMemory for every loop prompt: spec mode first, failure mode after a failed loop; records what was given', async () => {
    const store = new MemoryStore();
    const { repo, key: here } = await repository();
    const bySpec = await seed(store, {
      repo: here,
      signature: 'rubric failed (exit 1)\nwrite done.txt with ok',
      firstError: 'write done.txt with ok',
      fix: 'Write done.txt before ticking.',
    });
    const byError = await seed(store, {
      repo: here,
      signature: `rubric failed (exit 1)\n${FAIL_LINE}`,
      firstError: FAIL_LINE,
      fix: 'done.txt needs the line ok.',
    });
    await seed(store, { repo: 'elsewhere', signature: FAIL_LINE, firstError: FAIL_LINE, fix: 'not for shop' });
    const agent = new ScriptedAgent().script('continue', fail).script('retry', fix);
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent, store });
    const r = await run(t, repo.root);
    expect(r.exitCode, t.log.text()).toBe(0);

    const [first, second] = agent.calls.map((c) => c.prompt);
    expect(lessonsBlock(first ?? '')).toBe(
      '- Seen before: rubric failed (exit 1) write done.txt with ok\n  Fix: Write done.txt before ticking.',
    );
    expect(lessonsBlock(second ?? '')).toContain(
      `- Seen before: rubric failed (exit 1) ${FAIL_LINE}\n  Fix: done.txt needs the line ok.`,
    );
    expect(second).not.toContain('not for shop');

    const calls = store.callsOf(TICKET);
    expect(calls.map((c) => c.lessons)).toEqual([1, lessonsBlock(second ?? '')?.split('\n- ').length]);
    const recalls = store.tables.recalls.map((x) => [x.callId, x.loop, x.lessonId, x.how]);
    expect(recalls).toContainEqual([calls[0]?.id, 1, bySpec, 'lexical']);
    expect(recalls).toContainEqual([calls[1]?.id, 2, byError, 'lexical']);
    expect((await store.lessons.get(byError))?.passed).toBe(1);
  });

  it('uses a plugin that binds LessonMemory instead of the ladder, with the key the loop computed', async () => {
    const store = new MemoryStore();
    const { repo, key: here } = await repository();
    await seed(store, {
      repo: here,
      signature: 'write done.txt with ok',
      firstError: 'write done.txt with ok',
      fix: 'from the store',
    });
    const keys: RecallKey[] = [];
    const mine: Plugin = {
      name: 'my-memory',
      register(kernel) {
        kernel.bind(Tokens.LessonMemory, {
          useValue: {
            async recall(key) {
              keys.push(key);
              const l = (await store.lessons.list({}))[0]!;
              return [
                {
                  ...l,
                  signature: 'seen by my plugin',
                  lesson: 'my plugin says so',
                  similarity: 1,
                  cosine: null,
                  how: 'rerank',
                },
              ];
            },
          },
        });
      },
    };
    const agent = new ScriptedAgent().script('continue', fail).script('retry', fix);
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent, store, plugins: [mine] });
    expect((await run(t, repo.root)).exitCode, t.log.text()).toBe(0);
    for (const c of agent.calls) {
      expect(lessonsBlock(c.prompt)).toBe('- Seen before: seen by my plugin\n  Fix: my plugin says so');
    }
    expect(keys.map((k) => k.mode)).toEqual(['spec', 'failure']);
    expect(keys[0]?.query).toBe(spec(false));
    expect(keys[1]).toMatchObject({ repo: here, mode: 'failure' });
    expect(keys[1]?.query.startsWith(`${keys[1]?.firstError}\n`)).toBe(true);
    expect(store.tables.recalls.map((x) => x.how)).toEqual(['rerank', 'rerank']);
  });

  it('goes on without lessons when recall fails, warning once for the run', async () => {
    const store = new MemoryStore();
    store.lessons.lexical = async () => {
      throw new Error('connection refused (the database is down)');
    };
    const agent = new ScriptedAgent().script('continue', fail).script('retry', fail, fix);
    const { repo } = await repository();
    const t = await createTestKernel({ root: repo.root, env: repo.env, agent, store });
    expect((await run(t, repo.root)).exitCode, t.log.text()).toBe(0);
    expect(agent.calls).toHaveLength(3);
    for (const c of agent.calls) expect(c.prompt).not.toContain('<lessons>');
    const warnings = t.log.lines.filter((l) => l.text.includes('lesson recall failed')).map((l) => l.text);
    expect(warnings).toEqual([
      expect.stringContaining("lesson recall failed, so this run's loops get no lessons: connection refused"),
    ]);
    expect(store.callsOf(TICKET).map((c) => c.lessons)).toEqual([0, 0, 0]);
  });
});
