import { readdirSync, readFileSync, statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trust } from '../../core/decision/trust.js';
import type { Plugin } from '../../core/kernel/kernel.js';
import type { LoopKind } from '../../core/ports/agent.js';
import type { AgentStep } from '../../core/testing/index.js';
import {
  createTestKernel,
  MemoryStore,
  makeTicketRepo,
  removeTicketRepos,
  runTicket,
  ScriptedAgent,
  type TestKernel,
} from '../../core/testing/index.js';
import { httpDeciderFromConfig } from '../../plugins/decider-http/index.js';
import { DECIDER_HTTP_KEYS } from '../../plugins/decider-http/keys.js';
import { answerAll, FakeDecider, type Misbehaviour, misbehave } from '../fakes/decider-server.js';

/**
 * The loop's stuck question in-process: `runTicket` through the testing kernel
 * with core's decider plugin (the `onVerdict` tap) and the hosted client
 * against the protocol-checking fake decider over real HTTP. Every loop fails
 * the same test with a different tree (verdicts first, spinning, spinning,
 * spinning), so loops 2 to 4 are asked; without the decider the run is
 * detained as `failed` after loop 4.
 */

const TICKET = 'PROJ-1';
const FAIL_LINE = 'FAILED tests/test_done.py::test_done - AssertionError: done.txt is not ok';
const MODEL = 'fake-decider-v1';

const fakes: FakeDecider[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.stop();
  removeTicketRepos();
});

interface Repo {
  root: string;
  env: NodeJS.ProcessEnv;
}

function makeRepo(config: Record<string, string>): Repo {
  return makeTicketRepo({
    ticket: TICKET,
    prefix: 'chalk-decider-loop-',
    rubric: `echo '${FAIL_LINE}'; exit 1\n`,
    spec: `# ${TICKET}: make done.txt\n\n- [ ] step 1: write done.txt\n`,
    // The rubric fails before any loop by design: the base check has tests of its own.
    env: { CHALK_BASELINE: 'off', CHALK_MAX_RETRIES: '3', CHALK_FP_RULES: 'shadow', ...config },
  });
}

/** A loop that writes a different wrong done.txt each time: the same failing test, another tree. */
const writeBad =
  (n: number): AgentStep<LoopKind> =>
  async (c) => {
    await c.write('done.txt', `nope ${n}\n`);
    return { answer: { status: 'done', summary: `tried ${n}` } };
  };
const agent = () =>
  new ScriptedAgent().script('continue', writeBad(1)).script('retry', writeBad(2), writeBad(3), writeBad(4));

/** The hosted client as decider-http offers it, reading trust from the test's state directory. */
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

async function fake(opts: ConstructorParameters<typeof FakeDecider>[0] = {}, host?: string): Promise<FakeDecider> {
  const f = await new FakeDecider({ model: MODEL, ...opts }).start(0, host);
  fakes.push(f);
  return f;
}

/** 20 judged shadow answers of this decider and model, every one right: the decider is calibrated. */
async function calibrate(store: MemoryStore, url: string, model = MODEL): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const runId = `OLD-${i}-1700000000`;
    await store.decisions.record([
      { runId, kind: 'stuck', question: 'stuck', answer: 'yes', confidence: 0.95, mode: 'shadow', model, url },
    ]);
    await store.lessons.open({ repo: 'shop', ticket: `OLD-${i}`, signature: 'same failure', runId });
  }
}

async function runWith(repo: Repo, o: { store?: MemoryStore; plugins?: Plugin[] } = {}) {
  const t = await createTestKernel({
    root: repo.root,
    env: repo.env,
    agent: agent(),
    ...(o.store ? { store: o.store } : {}),
    plugins: [hosted(repo.env), ...(o.plugins ?? [])],
  });
  const r = await runTicket(t.deps(), { root: repo.root });
  const rows = t.store.tables.decisions.filter((d) => d.runId?.startsWith(`${TICKET}-`));
  return { t, r, rows };
}

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });

/** The run's io/decisions.jsonl, one record per line ([] when there is none). */
const jsonl = (repo: Repo) => {
  const file = files(repo.env.XDG_STATE_HOME as string).find((p) => p.endsWith(`${TICKET}/io/decisions.jsonl`));
  if (!file) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
};

/** The run as it goes with the decider off: detained as failed after four loops. */
function expectUnchanged(t: TestKernel, r: Awaited<ReturnType<typeof runTicket>>) {
  expect(r.exitCode, t.log.text()).toBe(3);
  expect(r.outcome).toMatchObject({ kind: 'detained', detentionKind: 'failed' });
  expect(t.store.callsOf(TICKET).map((c) => c.verdict)).toEqual(['first', 'spinning', 'spinning', 'spinning']);
}

const warnings = (t: TestKernel, re: RegExp) => t.log.lines.filter((l) => l.level === 'warn' && re.test(l.text));

describe('the stuck question in the loop', { timeout: 60_000 }, () => {
  it('with the decider off, nothing is asked (the baseline every other case is held to)', async () => {
    const f = await fake();
    const repo = makeRepo({ CHALK_DECIDER: 'off', CHALK_DECIDER_URL: f.url });
    const { t, r, rows } = await runWith(repo);
    expectUnchanged(t, r);
    expect(rows).toEqual([]);
    expect(f.connections).toBe(0);
  });

  it('in shadow, a confident yes changes nothing but the record: a row and a JSONL line per question', async () => {
    const f = await fake();
    const repo = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url });
    const { t, r, rows } = await runWith(repo);
    expectUnchanged(t, r);
    expect(f.violations).toEqual([]);
    const loops = t.store.callsOf(TICKET);
    expect(rows.map((d) => [d.kind, d.question, d.answer, d.mode, d.acted, d.model, d.callId, d.loop])).toEqual(
      [2, 3, 4].map((n) => ['stuck', 'stuck', 'yes', 'shadow', false, MODEL, loops[n - 1]?.id, n]),
    );
    expect(rows.every((d) => d.confidence === 0.9 && typeof d.latencyMs === 'number')).toBe(true);
    const lines = jsonl(repo);
    expect(lines.map((l) => [l.tags.kind, l.tags.loop, l.tags.mode, l.tags.acted, l.model])).toEqual(
      [2, 3, 4].map((n) => ['stuck', String(n), 'shadow', 'false', MODEL]),
    );
    // What the decider was sent: both loops' failing tests and first errors, the diffstat, the fixed question.
    const sent = f.requests[0];
    expect(sent?.questions).toEqual({
      stuck: { type: 'noul', instructions: 'Is the agent stuck on the same root cause as in the previous loop?' },
    });
    expect(sent?.state).toContain('previous loop:\n  failing tests (1): tests/test_done.py::test_done');
    expect(sent?.state).toContain('first error: ');
    expect(sent?.state).toMatch(/changes between the two loops \(git diff --stat\):\n done\.txt \| 2 \+-/);
    expect(sent?.state).not.toContain('nope');
  });

  it('in on but not calibrated, it records as shadow and says why once per run', async () => {
    const f = await fake({ script: (req) => ({ body: answerAll(req, 0.97, MODEL) }) });
    const repo = makeRepo({ CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url });
    const { t, r, rows } = await runWith(repo);
    expectUnchanged(t, r);
    expect(rows.map((d) => [d.mode, d.acted])).toEqual([
      ['shadow', false],
      ['shadow', false],
      ['shadow', false],
    ]);
    const said = warnings(t, /CHALK_DECIDER=on acts as shadow/);
    expect(said).toHaveLength(1);
    expect(said[0]?.text).toMatch(/is not calibrated yet: 0 judged shadow answers at 0.9, 0 right/);
  });

  it('in on and calibrated, a confident yes detains the run at once as stuck', async () => {
    const f = await fake({ script: (req) => ({ body: answerAll(req, 0.97, MODEL) }) });
    const repo = makeRepo({ CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url });
    const store = new MemoryStore();
    await calibrate(store, f.url);
    const { t, r, rows } = await runWith(repo, { store });
    expect(r.exitCode, t.log.text()).toBe(3);
    expect(r.outcome).toMatchObject({ kind: 'detained', detentionKind: 'stuck' });
    expect(t.store.callsOf(TICKET).map((c) => c.verdict)).toEqual(['first', 'spinning']);
    expect(rows.map((d) => [d.mode, d.acted, d.answer, d.callId])).toEqual([
      ['on', true, 'yes', t.store.callsOf(TICKET)[1]?.id],
    ]);
    expect(t.log.text()).toContain('stuck: ');
    // The decider's StopRequest carries the next line, its confidence in it.
    expect(t.log.text()).toMatch(
      /next: the decider judged the agent stuck on the same root cause .*\(confidence 0\.97\)/,
    );
    expect(warnings(t, /acts as shadow/)).toEqual([]);
  });

  it('in on and calibrated, a confident no, or a yes below the threshold, changes nothing', async () => {
    for (const p of [0.03, 0.85]) {
      const f = await fake({ script: (req) => ({ body: answerAll(req, p, MODEL) }) });
      const repo = makeRepo({ CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url });
      const store = new MemoryStore();
      await calibrate(store, f.url);
      const { t, r, rows } = await runWith(repo, { store });
      expectUnchanged(t, r);
      expect(rows.map((d) => [d.mode, d.acted])).toEqual([
        ['on', false],
        ['on', false],
        ['on', false],
      ]);
    }
  });

  const noAnswer: Array<[Misbehaviour, string | null]> = [
    ['status_401', 'auth'],
    ['status_422', 'rejected'],
    ['status_500', 'server'],
    ['unreadable', 'invalid'],
    ['other_version', 'version'],
    ['slow', 'timeout'],
    ['silent', 'timeout'],
    ['missing_key', null],
  ];
  for (const [kind, name] of noAnswer) {
    it(`a decider that answers ${kind}: recorded ${name ?? 'as unknown'}, and the loop goes on unchanged (on, calibrated)`, async () => {
      const f = await fake({ script: misbehave(kind, { model: MODEL }) });
      const repo = makeRepo({ CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url });
      const store = new MemoryStore();
      await calibrate(store, f.url);
      const { t, r, rows } = await runWith(repo, { store });
      expectUnchanged(t, r);
      expect(f.violations).toEqual([]);
      expect(rows).toHaveLength(3);
      for (const d of rows) {
        expect(d.answer ?? null).toBeNull();
        expect(d.acted).toBe(false);
        if (name) expect(d.error).toMatch(new RegExp(`^${name}: `));
        else expect([d.error, d.model]).toEqual([null, MODEL]);
      }
      const lines = jsonl(repo);
      expect(lines.map((l) => l.failure?.kind ?? null)).toEqual([name, name, name]);
      // Never retried within a loop: one request per loop.
      expect(f.requests).toHaveLength(3);
      if (name === 'auth' || name === 'version') {
        expect(warnings(t, name === 'auth' ? /refused the credentials/ : /protocol 2, Chalk speaks 1/)).toHaveLength(1);
      } else {
        expect(t.log.lines.filter((l) => l.level === 'warn' && /decider/.test(l.text))).toEqual([]);
      }
    });
  }

  it('a database that refuses the rows is said once, and the run and its JSONL go on', async () => {
    const f = await fake();
    const repo = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url });
    const store = new MemoryStore();
    store.decisions.record = async () => {
      throw new Error('the database is down');
    };
    const { t, r } = await runWith(repo, { store });
    expectUnchanged(t, r);
    expect(jsonl(repo)).toHaveLength(3);
    expect(warnings(t, /a decision could not be recorded: the database is down/)).toHaveLength(1);
  });

  it('an answer out of order (keys reversed, one not asked) is read by its key', async () => {
    const f = await fake({ script: misbehave('out_of_order', { model: MODEL, p: 0.97 }) });
    const repo = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url });
    const { t, r, rows } = await runWith(repo);
    expectUnchanged(t, r);
    expect(rows.map((d) => d.answer)).toEqual(['yes', 'yes', 'yes']);
    expect(jsonl(repo).map((l) => Object.keys(l.answers))).toEqual([['stuck'], ['stuck'], ['stuck']]);
  });

  it('a hanging decider costs each loop at most its 2-second budget', async () => {
    const f = await fake({ script: misbehave('silent') });
    const repo = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url });
    const spent: number[] = [];
    let t0 = 0;
    const clock: Plugin = {
      name: 'stopwatch',
      register(kernel) {
        kernel.hooks.afterRubric.tapPromise('stopwatch', async () => {
          t0 = performance.now();
        });
        // Registered after core-decider, so it runs once the stuck question is over.
        kernel.hooks.onVerdict.tapPromise('stopwatch', async () => {
          spent.push(performance.now() - t0);
          return undefined;
        });
      },
    };
    const { t, r, rows } = await runWith(repo, { plugins: [clock] });
    expectUnchanged(t, r);
    expect(rows.map((d) => d.error?.split(':')[0])).toEqual(['timeout', 'timeout', 'timeout']);
    for (const d of rows) expect(d.latencyMs).toBeGreaterThanOrEqual(1_900);
    for (const d of rows) expect(d.latencyMs).toBeLessThan(3_000);
    // Loops 2-4 asked; the whole verdict step, row and diffstat included, stays near the budget.
    expect(spent.slice(1).every((ms) => ms < 5_000)).toBe(true);
  });

  it('the token appears in no output, log, row or file the run writes, only in the Authorization header', async () => {
    const token = `zq9tok${Date.now()}secret`;
    const f = await fake({ token, script: (req) => ({ body: answerAll(req, 0.97, MODEL) }) });
    const repo = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url, CHALK_DECIDER_TOKEN: token });
    const { t, r, rows } = await runWith(repo);
    expectUnchanged(t, r);
    expect(rows.map((d) => d.answer)).toEqual(['yes', 'yes', 'yes']);
    expect(f.authHeaders).toEqual([`Bearer ${token}`, `Bearer ${token}`, `Bearer ${token}`]);
    expect(t.log.text()).not.toContain(token);
    expect(JSON.stringify(t.store.tables)).not.toContain(token);
    const written = files(repo.env.XDG_STATE_HOME as string);
    expect(written.some((p) => p.endsWith('decisions.jsonl'))).toBe(true);
    for (const p of written) expect(readFileSync(p, 'utf8'), p).not.toContain(token);
    // Every JSONL line is a decision record without the state either.
    expect(jsonl(repo).every((l) => !('state' in l))).toBe(true);
  });

  const remoteIp = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
  it.skipIf(!remoteIp)(
    'an untrusted remote URL receives zero bytes, the run says why once, and each loop records untrusted',
    async () => {
      const f = await fake({ script: (req) => ({ body: answerAll(req, 0.97, MODEL) }) }, remoteIp);
      const repo = makeRepo({ CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url });
      const { t, r, rows } = await runWith(repo);
      expectUnchanged(t, r);
      expect(f.connections).toBe(0);
      expect(rows.map((d) => d.error?.split(':')[0])).toEqual(['untrusted', 'untrusted', 'untrusted']);
      expect(warnings(t, /going on with the decider off: CHALK_DECIDER_URL .* was never trusted/)).toHaveLength(1);
      // Once trusted on this machine, the same run's questions reach it (the control).
      trust(f.url, repo.env);
      const again = makeRepo({ CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url });
      trust(f.url, again.env);
      const second = await runWith(again);
      expectUnchanged(second.t, second.r);
      expect(f.connections).toBeGreaterThan(0);
      expect(second.rows.map((d) => d.answer)).toEqual(['yes', 'yes', 'yes']);
    },
  );
});
