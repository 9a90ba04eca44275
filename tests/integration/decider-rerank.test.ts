import { afterEach, describe, expect, it } from 'vitest';
import type { Plugin } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { Embedder } from '../../core/ports/embedder.js';
import { repoName } from '../../core/repo/git.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  MemoryStore,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
} from '../../core/testing/index.js';
import { httpDeciderFromConfig } from '../../plugins/decider-http/index.js';
import { DECIDER_HTTP_KEYS } from '../../plugins/decider-http/keys.js';
import { FakeDecider, type WireRequest } from '../fakes/decider-server.js';

/**
 * The lesson rerank in the loop, in-process: `runTicket` through the testing kernel with core's
 * decider plugin, the hosted client against the protocol-checking fake decider over real HTTP,
 * and an injected Embedder (deterministic unit vectors). Loop 1 fails, loop 2 (the retry) fixes
 * it; the retry's prompt is where the lessons are read. Two lessons match the failure lexically
 * (A, B), one only semantically (C), one neither (D). The decider says A and C apply, B not.
 */

const TICKET = 'PROJ-1';
const SPEC = `specs/${TICKET}.md`;
const FAIL_LINE = 'FAILED tests/test_done.py::test_done - AssertionError: done.txt is not ok';
const MODEL = 'fake-decider-v1';
const DIM = 384;
const unit = (i: number) => Array.from({ length: DIM }, (_, j) => (j === i ? 1 : 0));

const fakes: FakeDecider[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.stop();
  removeTicketRepos();
});

const spec = (ticked: boolean) => `# ${TICKET}: make done.txt\n\n- [${ticked ? 'x' : ' '}] write done.txt with ok\n`;

function makeRepo(config: Record<string, string>) {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-rerank-',
    rubric: `if grep -q '^ok$' done.txt 2>/dev/null && grep -q '^- \\[x\\]' ${SPEC}; then echo pass; exit 0; fi\necho '${FAIL_LINE}'; exit 1\n`,
    spec: spec(false),
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: {
      CHALK_BASELINE: 'off',
      CHALK_REVIEW: 'false',
      CHALK_MAX_RETRIES: '2',
      CHALK_DECIDER_MIN_LESSONS: '4',
      ...config,
    },
  });
}

const fail: AgentStep<LoopKind> = () => ({ answer: { status: 'done', summary: 'tried' } });
const fix: AgentStep<LoopKind> = async (c) => {
  await c.write('done.txt', 'ok\n');
  await c.write(SPEC, spec(true));
  return { answer: { status: 'done', summary: 'fixed' } };
};

const hosted = (env: NodeJS.ProcessEnv): Plugin => ({
  name: 'decider-http',
  configuration: DECIDER_HTTP_KEYS,
  register(kernel) {
    // As decider-http declares it: under CHALK_DECIDER_PROVIDER=auto it fits any URL.
    kernel.offer(
      'Decider',
      'hosted',
      { useFactory: () => httpDeciderFromConfig(kernel.config, env) },
      { auto: () => true },
    );
  },
});

/** Text about done.txt lies along axis 0, anything else along axis 1. */
const embedder = (calls: string[][]): Plugin => ({
  name: 'test-embedder',
  register(kernel) {
    const e: Embedder = {
      dimensions: DIM,
      embed: async (texts) => {
        calls.push(texts);
        return texts.map((t) => unit(t.includes('done.txt') ? 0 : 1));
      },
    };
    kernel.bind(Tokens.Embedder, { useValue: e });
  },
});

async function seed(store: MemoryStore, repo: string, o: { firstError: string; fix: string; embedding: number[] }) {
  const id = await store.lessons.open({
    repo,
    ticket: 'OLD-1',
    signature: `rubric failed\n${o.firstError}`,
    firstError: o.firstError,
  });
  await store.lessons.resolve({
    id,
    resolution: 'the note',
    lesson: o.fix,
    resolvedBy: 'me',
    scope: 'repo',
    embedding: o.embedding,
  });
  return id;
}

/** 20 judged shadow stuck answers of this decider and model, every one right: calibrated. */
async function calibrate(store: MemoryStore, url: string) {
  for (let i = 0; i < 20; i++) {
    const runId = `OLD-${i}-1700000000`;
    await store.decisions.record([
      { runId, kind: 'stuck', question: 'stuck', answer: 'yes', confidence: 0.95, mode: 'shadow', model: MODEL, url },
    ]);
    await store.lessons.open({ repo: 'shop', ticket: `OLD-${i}`, signature: 'same failure', runId });
  }
}

const lessonsBlock = (prompt: string) => /<lessons>\n([\s\S]*?)\n<\/lessons>/.exec(prompt)?.[1] ?? '';

async function scenario(
  mode: 'on' | 'shadow',
  o: { agent?: () => ScriptedAgent; silent?: boolean; exitCode?: number; config?: Record<string, string> } = {},
) {
  const probe = makeRepo({});
  const here = await repoName(probe.root);
  const store = new MemoryStore();
  const A = await seed(store, here, { firstError: FAIL_LINE, fix: 'A: write ok into done.txt', embedding: unit(2) });
  const B = await seed(store, here, {
    firstError: 'FAILED tests/test_done.py::test_done - AssertionError: done.txt is not right',
    fix: 'B: a wrong fix',
    embedding: unit(3),
  });
  const C = await seed(store, here, {
    firstError: 'KeyError: missing config value',
    fix: 'C: found by meaning',
    embedding: unit(0),
  });
  const D = await seed(store, here, { firstError: 'ZeroDivisionError', fix: 'D: unrelated', embedding: unit(1) });
  const says: Record<string, number> = { [`lesson_${A}`]: 0.97, [`lesson_${B}`]: 0.02, [`lesson_${C}`]: 0.95 };
  const f = await new FakeDecider({
    model: MODEL,
    script: (req: WireRequest) =>
      o.silent
        ? { silent: true }
        : {
            body: {
              model: MODEL,
              answers: Object.fromEntries(
                Object.keys(req.questions).map((id) => [id, { type: 'noul', noul: says[id] ?? 0.02 }]),
              ),
            },
          },
  }).start(0);
  fakes.push(f);
  await calibrate(store, f.url);
  const repo = {
    root: probe.root,
    env: { ...probe.env, CHALK_DECIDER: mode, CHALK_DECIDER_URL: f.url, ...(o.config ?? {}) },
  };
  const agent = o.agent ? o.agent() : new ScriptedAgent().script('continue', fail).script('retry', fix);
  const embedded: string[][] = [];
  const t = await createTestKernel({
    root: repo.root,
    env: repo.env,
    agent,
    store,
    plugins: [hosted(repo.env), embedder(embedded)],
  });
  const r = await runTicket(t.deps(), { root: repo.root });
  expect(r.exitCode, t.log.text()).toBe(o.exitCode ?? 0);
  const all = store.tables.decisions.filter((d) => d.runId?.startsWith(`${TICKET}-`));
  const rows = all.filter((d) => d.kind === 'rerank');
  return { t, f, store, agent, rows, all, embedded, ids: { A, B, C, D } };
}

describe('the lesson rerank in the loop', { timeout: 60_000 }, () => {
  it('in on and calibrated, the rerank keeps the lessons the decider confirms, most confident first', async () => {
    const { f, store, agent, rows, embedded, ids } = await scenario('on');
    expect(f.violations).toEqual([]);
    const retry = lessonsBlock(agent.calls[1]?.prompt ?? '');
    expect(retry.split('\n- ')).toHaveLength(2);
    expect(retry).toMatch(
      /^- Seen before: .*\n {2}Fix: A: write ok into done\.txt\n- Seen before: .*\n {2}Fix: C: found by meaning$/,
    );
    expect(retry).not.toContain('B: a wrong fix');
    expect(retry).not.toContain('D: unrelated');
    // The retry's request asked about A and B (lexical) then C (semantic); D was not near enough.
    const asked = f.requests.filter((q) => Object.keys(q.questions).some((k) => k.startsWith('lesson_')));
    expect(Object.keys(asked.at(-1)?.questions ?? {})).toEqual([
      `lesson_${ids.A}`,
      `lesson_${ids.B}`,
      `lesson_${ids.C}`,
    ]);
    expect(asked.at(-1)?.state.length).toBeLessThanOrEqual(4_000);
    expect(embedded.at(-1)?.[0]).toContain(FAIL_LINE);
    const loop2 = rows.filter((d) => d.loop === 2);
    expect(loop2.map((d) => [d.lessonId, d.answer, d.mode, d.acted])).toEqual([
      [ids.A, 'yes', 'on', true],
      [ids.B, 'no', 'on', true],
      [ids.C, 'yes', 'on', true],
    ]);
    const calls = store.callsOf(TICKET);
    const given = store.tables.recalls.filter((x) => x.callId === calls[1]?.id).map((x) => [x.lessonId, x.how]);
    expect(given).toEqual([
      [ids.A, 'rerank'],
      [ids.C, 'rerank'],
    ]);
  });

  it('in shadow, it changes nothing but the record: the plain ladder, the choices in decisions rows', async () => {
    const { f, store, agent, rows, ids } = await scenario('shadow');
    expect(f.violations).toEqual([]);
    const retry = lessonsBlock(agent.calls[1]?.prompt ?? '');
    expect(retry).toContain('A: write ok into done.txt');
    expect(retry).toContain('B: a wrong fix');
    expect(retry).not.toContain('C: found by meaning');
    const loop2 = rows.filter((d) => d.loop === 2);
    expect(loop2.map((d) => [d.lessonId, d.answer, d.mode, d.acted])).toEqual([
      [ids.A, 'yes', 'shadow', false],
      [ids.B, 'no', 'shadow', false],
      [ids.C, 'yes', 'shadow', false],
    ]);
    const calls = store.callsOf(TICKET);
    const given = store.tables.recalls.filter((x) => x.callId === calls[1]?.id).map((x) => x.how);
    expect(given).toEqual(['lexical', 'lexical']);
  });

  it('shares the loop budget with the stuck question: a hanging decider costs a loop at most its 2 seconds', async () => {
    const bad =
      (n: number): AgentStep<LoopKind> =>
      async (c) => {
        await c.write('done.txt', `nope ${n}\n`);
        return { answer: { status: 'done', summary: `tried ${n}` } };
      };
    const { t, all } = await scenario('on', {
      silent: true,
      exitCode: 3,
      config: { CHALK_FP_RULES: 'shadow' },
      agent: () => new ScriptedAgent().script('continue', bad(1)).script('retry', bad(2), bad(3)),
    });
    expect(t.store.callsOf(TICKET).map((c) => c.verdict)).toEqual(['first', 'spinning', 'spinning']);
    for (const loop of [2, 3]) {
      const rerank = all.filter((d) => d.loop === loop && d.kind === 'rerank');
      const stuck = all.filter((d) => d.loop === loop && d.kind === 'stuck');
      expect(rerank.length).toBeGreaterThan(0);
      expect(rerank.every((d) => d.error?.startsWith('timeout') && d.answer === null)).toBe(true);
      // The rerank's wait used the loop's budget; the stuck question had under 50 ms and sent nothing.
      expect(stuck.map((d) => d.error?.split(':')[0])).toEqual(['budget']);
      expect((rerank[0]?.latencyMs ?? 0) + (stuck[0]?.latencyMs ?? 0)).toBeLessThan(3_000);
    }
    // The run went as with the decider off: detained as failed after its retries.
    expect(t.log.text()).not.toContain('stuck: the decider judged');
  });
});
