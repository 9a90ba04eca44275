import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrationOf, judgeStuck } from '../../../core/decision/calibration.js';
import type { CallRecord } from '../../../core/ports/store.js';
import { PgStore, SCHEMA_VERSION } from '../../../core/store/index.js';
import { BACKENDS } from './backends.js';

const call = (over: Partial<CallRecord> = {}): CallRecord => ({
  repo: 'shop',
  ticket: 'PROJ-1',
  branch: 'PROJ-1-limiter',
  loop: 1,
  kind: 'continue',
  agentStatus: 'ok',
  rubricExit: 1,
  progressed: true,
  model: 'claude-x',
  prompts: 'ab12cd34',
  costUsd: 0.25,
  budgetUsd: 1,
  durationS: 12,
  inputTokens: 100,
  outputTokens: 50,
  cacheReadTokens: 10,
  cacheWriteTokens: 5,
  turns: 3,
  denials: 0,
  lessons: 0,
  ...over,
});

const unit = (seed: number) => {
  const v = Array.from({ length: 384 }, (_, i) => Math.sin(seed * 7.3 + i * 0.37));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

describe.each(BACKENDS)('store API on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;

  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
  });
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  it('records a call with every column, keeping text as given and empty fp fields as NULL', async () => {
    const tests = Array.from({ length: 150 }, (_, i) => `t::case_${String(i).padStart(3, '0')}`);
    const id = await store.calls.record(
      call({
        ticket: 'PROJ-7',
        runId: 'PROJ-7-1700000000',
        testsHash: '',
        failing: 150,
        failingTests: tests,
        firstError: `<script>alert('x')</script> it's "quoted"; DROP TABLE runs; --`,
        verdict: 'first',
        fpRules: 'shadow',
      }),
    );
    const r = await store.pool.query('SELECT * FROM runs WHERE id = $1', [id]);
    const row = r.rows[0];
    expect(row.first_error).toBe(`<script>alert('x')</script> it's "quoted"; DROP TABLE runs; --`);
    expect(row.failing_tests.split('\n')).toEqual(tests.slice(0, 100));
    expect(row.tests_hash).toBeNull();
    expect(row.tree_id).toBeNull();
    expect(row.cost_usd).toBe('0.2500');
    expect(row.run_id).toBe('PROJ-7-1700000000');
    expect(Number(row.cache_write_tokens)).toBe(5);
    expect(row.flaky_tests).toBeNull();
  });

  it('records the flaky tests of a loop, one per line', async () => {
    const id = await store.calls.record(
      call({ ticket: 'PROJ-8', flakyTests: ['t::net fetch', 't::clock'], fpRules: 'shadow' }),
    );
    const r = await store.pool.query('SELECT flaky_tests FROM runs WHERE id = $1', [id]);
    expect(r.rows[0].flaky_tests).toBe('t::net fetch\nt::clock');
  });

  it('summarises tickets: loops, cost of all calls, fixes, and the state rules', async () => {
    const repo = 'summary';
    // PROJ-1: loops then a submitted event -> submitted
    await store.calls.record(call({ repo, ticket: 'PROJ-1', kind: 'continue', costUsd: 0.5 }));
    await store.calls.record(call({ repo, ticket: 'PROJ-1', kind: 'retry', costUsd: 0.25 }));
    await store.calls.record(call({ repo, ticket: 'PROJ-1', kind: 'review', agentStatus: 'pass', costUsd: 0.1 }));
    await store.events.record(repo, 'PROJ-1', 'submitted');
    // a distill after the event does not hide it
    await store.calls.record(call({ repo, ticket: 'PROJ-1', kind: 'distill', costUsd: 0.05 }));
    // PROJ-2: detention, then resumed with a fix-review loop after it -> stopped
    await store.events.record(repo, 'PROJ-2', 'detention');
    const lesson = await store.lessons.open({ repo, ticket: 'PROJ-2', signature: 'boom' });
    await store.lessons.resolve({ id: lesson, resolution: 'r', lesson: 'l', resolvedBy: 'me' });
    await new Promise((r) => setTimeout(r, 5));
    await store.calls.record(call({ repo, ticket: 'PROJ-2', kind: 'fix-review', costUsd: 1 }));
    // PROJ-3: last call a passing review, no event -> done
    await store.calls.record(call({ repo, ticket: 'PROJ-3', kind: 'review', agentStatus: 'pass' }));
    // PROJ-4: spec check blocked
    await store.calls.record(call({ repo, ticket: 'PROJ-4', kind: 'spec-check', agentStatus: 'fail' }));
    await store.events.record(repo, 'PROJ-4', 'spec_blocked');
    // PROJ-5: only a lesson, no calls -> new; PROJ-6: ready event -> done
    await store.lessons.open({ repo, ticket: 'PROJ-5', signature: 's' });
    await store.events.record(repo, 'PROJ-6', 'ready');
    // another repository's ticket never shows
    await store.calls.record(call({ repo: 'other', ticket: 'PROJ-1', costUsd: 9 }));

    const s = await store.tickets.summaries(repo);
    const by = Object.fromEntries(s.map((t) => [t.ticket, t]));
    expect(by['PROJ-1']).toMatchObject({ state: 'submitted', loops: 2, fixes: 0 });
    expect(by['PROJ-1']?.costUsd).toBeCloseTo(0.9, 6);
    expect(by['PROJ-2']).toMatchObject({ state: 'stopped', loops: 1, fixes: 1, costUsd: 1 });
    expect(by['PROJ-3']?.state).toBe('done');
    expect(by['PROJ-4']?.state).toBe('spec-blocked');
    expect(by['PROJ-5']?.state).toBe('new');
    expect(by['PROJ-6']?.state).toBe('done');
    expect(s[0]?.ticket).toBe('PROJ-6'); // most recently active first
    expect(s).toHaveLength(6);
  });

  it('finds open lessons by fingerprint in a repository, other tickets only when asked', async () => {
    const repo = 'fp';
    const a = await store.lessons.open({ repo, ticket: 'PROJ-10', signature: 'x', fingerprint: 'f1', runId: 'r1' });
    const b = await store.lessons.open({ repo, ticket: 'PROJ-11', signature: 'x', fingerprint: 'f1' });
    const c = await store.lessons.open({ repo, ticket: 'PROJ-12', signature: 'x', fingerprint: 'f1' });
    await store.lessons.open({ repo: 'elsewhere', ticket: 'PROJ-13', signature: 'x', fingerprint: 'f1' });
    await store.lessons.resolve({ id: c, resolution: 'done', lesson: 'l', resolvedBy: 'me' });
    expect((await store.lessons.openByFingerprint(repo, 'f1')).map((l) => l.id)).toEqual([b, a]);
    expect((await store.lessons.openByFingerprint(repo, 'f1', 'PROJ-11')).map((l) => l.id)).toEqual([a]);
    expect(await store.lessons.openByFingerprint(repo, 'nope')).toEqual([]);
  });

  it('recalls resolved lessons by text within the scope rule, and keeps embeddings where given', async () => {
    const repo = 'recall';
    const texts = [
      "TypeError: Cannot read properties of undefined (reading 'id') at handler",
      'ECONNREFUSED 127.0.0.1:6379 redis connection refused',
      'AssertionError: expected 200 to equal 404 in routes test',
    ];
    const ids: number[] = [];
    for (const [i, t] of texts.entries()) {
      const id = await store.lessons.open({ repo, ticket: `PROJ-2${i}`, signature: t, firstError: t });
      await store.lessons.resolve({
        id,
        resolution: 'fixed',
        lesson: `lesson ${i}`,
        resolvedBy: 'me',
        scope: 'repo',
        embedding: unit(i),
      });
      ids.push(id);
    }
    const general = await store.lessons.open({ repo: 'another', ticket: 'PROJ-29', signature: texts[1] as string });
    await store.lessons.resolve({ id: general, resolution: 'g', lesson: 'g', resolvedBy: 'me', scope: 'general' });
    const hidden = await store.lessons.open({ repo: 'another', ticket: 'PROJ-30', signature: texts[1] as string });
    await store.lessons.resolve({ id: hidden, resolution: 'h', lesson: 'h', resolvedBy: 'me', scope: 'repo' });
    await store.lessons.open({ repo, ticket: 'PROJ-31', signature: texts[1] as string }); // open: never recalled

    const byText = await store.lessons.lexical({
      repo,
      mode: 'text',
      query: 'ECONNREFUSED 127.0.0.1:6380 redis connection refused',
      firstError: null,
      limit: 5,
    });
    expect(byText.map((l) => l.id).sort()).toEqual([ids[1], general].sort());
    expect(byText[0]?.similarity).toBeGreaterThan(0.5);

    const info = await store.info();
    const row = await store.pool.query(
      info.semanticRecall
        ? 'SELECT (embedding <=> $2::vector) AS d FROM lessons WHERE id = $1'
        : 'SELECT embedding FROM lessons WHERE id = $1',
      info.semanticRecall ? [ids[2], `[${unit(2).join(',')}]`] : [ids[2]],
    );
    if (info.semanticRecall) expect(Number(row.rows[0].d)).toBeCloseTo(0, 5);
    else expect(row.rows[0].embedding).toHaveLength(384);
  });

  it('records decisions in one go, tying them to the loop call and stripping URL credentials', async () => {
    const callId = await store.calls.record(call({ repo: 'dec', ticket: 'PROJ-40', runId: 'PROJ-40-1', loop: 3 }));
    await store.calls.record(call({ repo: 'dec', ticket: 'PROJ-40', runId: 'PROJ-40-1', loop: 3, kind: 'review' }));
    const n = await store.decisions.record([
      {
        runId: 'PROJ-40-1',
        loop: 3,
        kind: 'stuck',
        question: 'stuck?',
        answer: 'yes',
        confidence: 0.912,
        threshold: 0.8,
        mode: 'shadow',
        latencyMs: 120,
        model: 'm@rev',
        url: 'https://user:pw@decider.example:8471/v1',
      },
      { runId: 'PROJ-40-1', loop: 3, kind: 'rerank', question: 'which?', mode: 'on', error: 'timeout', acted: false },
    ]);
    expect(n).toBe(2);
    const r = await store.pool.query('SELECT * FROM decisions WHERE run_id = $1 ORDER BY id', ['PROJ-40-1']);
    expect(r.rows.map((d) => Number(d.call_id))).toEqual([callId, callId]);
    expect(r.rows[0].url).toBe('https://decider.example:8471/v1');
    expect(r.rows[0].confidence).toBe('0.912');
    expect(r.rows[1].answer).toBeNull();
    expect(r.rows[1].error).toBe('timeout');
  });

  it('gives every stuck answer with what its run did next (the calibration gate and the report card read it)', async () => {
    const loopOf = (runId: string, loop: number, progressed: boolean) =>
      store.calls.record(call({ repo: 'cal', ticket: runId.slice(0, 6), runId, loop, progressed }));
    // Run CAL-01: a yes at loop 2, then loop 3 progressed (a false stop).
    const a2 = await loopOf('CAL-01-1', 2, false);
    await loopOf('CAL-01-1', 3, true);
    // Run CAL-02: a yes at loop 2, then the run was detained (it opened a lesson).
    const b2 = await loopOf('CAL-02-1', 2, false);
    await store.lessons.open({ repo: 'cal', ticket: 'CAL-02', signature: 's', runId: 'CAL-02-1' });
    const url = 'http://127.0.0.1:8471';
    const row = { kind: 'stuck' as const, question: 'stuck', mode: 'shadow' as const, model: 'm@1', url };
    await store.decisions.record([
      { ...row, runId: 'CAL-01-1', callId: a2, answer: 'yes', confidence: 0.95 },
      { ...row, runId: 'CAL-02-1', callId: b2, answer: 'yes', confidence: 0.97 },
      // No answer, a rerank and a row of no run are not stuck answers.
      { ...row, runId: 'CAL-02-1', callId: b2, error: 'timeout: no full answer' },
      { ...row, kind: 'rerank', question: 'lesson_1', runId: 'CAL-02-1', answer: 'yes', confidence: 0.99 },
      { ...row, answer: 'yes', confidence: 0.99 },
    ]);
    const facts = (await store.decisions.stuckAnswers()).filter((f) => f.run.startsWith('CAL-'));
    expect(facts).toEqual([
      {
        url: `${url}/`,
        model: 'm@1',
        run: 'CAL-01-1',
        mode: 'shadow',
        answer: 'yes',
        confidence: 0.95,
        laterProgress: true,
        detained: false,
      },
      {
        url: `${url}/`,
        model: 'm@1',
        run: 'CAL-02-1',
        mode: 'shadow',
        answer: 'yes',
        confidence: 0.97,
        laterProgress: false,
        detained: true,
      },
    ]);
    expect(facts.map(judgeStuck)).toEqual(['wrong', 'right']);
    expect(calibrationOf(facts, { url, model: 'm@1', threshold: 0.9 })).toMatchObject({
      judged: 2,
      correct: 1,
      falseStops: 1,
      passes: false,
    });
  });

  it('reports what it is: version, schema version, extensions and row counts', async () => {
    const i = await store.info();
    expect(i.kind).toBe(backend.name === 'embedded' ? 'embedded' : 'server');
    expect(i.schemaVersion).toBe(SCHEMA_VERSION);
    expect(i.extensions.some((e) => e.startsWith('pg_trgm'))).toBe(true);
    expect(i.semanticRecall).toBe(i.extensions.some((e) => e.startsWith('vector')));
    if (backend.name === 'embedded') expect(i.semanticRecall).toBe(true);
    const count = await store.pool.query('SELECT count(*)::int AS n FROM runs');
    expect(i.rows.runs).toBe(count.rows[0].n);
    expect(i.where).not.toMatch(/:[^/@]*@/);
  });

  it('says when the first connection has been asked for, once, before it is open', async () => {
    const seen: string[] = [];
    const opening = PgStore.open(db.target, 120_000, { connecting: () => seen.push('connecting') });
    seen.push('returned');
    const other = await opening;
    seen.push('open');
    await other.close();
    expect(seen).toEqual(['returned', 'connecting', 'open']);
  });
});
