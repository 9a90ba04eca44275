import type { CallRecord, Store } from '../../core/ports/store.js';

/**
 * Telemetry for the report card's tests (the CLI, escaping, share and browser tests): a few
 * runs with every kind of call, verdicts, detentions, lessons and decider answers, through the
 * store API. Every stored text carries a sentinel so a test can check none leaks into
 * `chalk share`, and `HOSTILE` can replace every text to check the page escapes it.
 */
export const SENTINELS = {
  repo: 'sentinel-repo-acme',
  repo2: 'sentinel-repo-globex',
  ticket: 'SNTL-4242',
  branch: 'sntl-branch-feature',
  model: 'claude-opus-4-5-20991231',
  otherModel: 'arn:aws:bedrock:us-east-1:123456789012:sentinel-model',
  prompts: 'sntl0hash',
  runId: 'SNTL-4242-1700000042',
  test: 'tests/sentinel_dir/test_secret.py::test_sentinel_case',
  error: 'SentinelError: sentinel failure text at /home/sentinel-user/work/app.ts',
  tree: 'sntltree0000',
  testsHash: 'sntltestshash',
  note: 'sentinel office-hours note: ask sentinel-person@example.org',
  lesson: 'sentinel lesson text about the secret build',
  email: 'sentinel-person@example.org',
  host: 'sentinel-build-host.internal',
  question: 'sentinel decider question',
  deciderModel: 'sentinel-decider:rev-5eed1e55',
  deciderUrl: 'https://sentinel-decider.example.net/v1',
  deciderError: 'sentinel decider error text',
} as const;

/** What a hostile repository might leave in any text column. */
export const HOSTILE = '</script><b>x</b><img src=https://evil.example/p.png>\u2028';

export interface SeedOptions {
  /** Replace every stored text with HOSTILE (where the column takes any text). */
  hostile?: boolean;
}

const base = (over: Partial<CallRecord>): CallRecord => ({
  repo: SENTINELS.repo,
  ticket: SENTINELS.ticket,
  branch: SENTINELS.branch,
  loop: 1,
  kind: 'continue',
  agentStatus: 'ok',
  rubricExit: 0,
  progressed: true,
  model: SENTINELS.model,
  prompts: SENTINELS.prompts,
  costUsd: 0.3,
  budgetUsd: 1,
  durationS: 60,
  inputTokens: 1000,
  outputTokens: 200,
  cacheReadTokens: 5000,
  cacheWriteTokens: 100,
  turns: 8,
  denials: 0,
  lessons: 0,
  fpRules: 'shadow',
  ...over,
});

/** Seeds the telemetry; returns how many calls it recorded. */
export async function seedTelemetry(store: Store, opts: SeedOptions = {}): Promise<number> {
  const h = opts.hostile ? HOSTILE : null;
  const t = (s: string) => h ?? s;
  let calls = 0;
  const call = async (over: Partial<CallRecord>) => {
    calls++;
    const c = base(over);
    return store.calls.record(
      h
        ? {
            ...c,
            repo: h,
            ticket: h,
            branch: h,
            kind: over.kind === 'review' || over.kind === 'spec-check' ? c.kind : h,
            agentStatus: h,
            model: h,
            prompts: h,
            runId: c.runId ? `${h}${c.runId}` : null,
            testsHash: c.testsHash ? h : null,
            failingTests: c.failingTests ? [h] : null,
            flakyTests: c.flakyTests ? [h] : null,
            firstError: c.firstError ? h : null,
            treeId: c.treeId ? h : null,
            verdict: c.verdict ? h : null,
            fpRules: h,
          }
        : c,
    );
  };
  const runs = [
    { ticket: SENTINELS.ticket, repo: SENTINELS.repo, run: SENTINELS.runId },
    { ticket: 'SNTL-7', repo: SENTINELS.repo, run: 'SNTL-7-1700000100' },
    { ticket: 'SNTL-8', repo: SENTINELS.repo2, run: 'SNTL-8-1700000200' },
  ];
  // Run 1: a spec check, progress, two failing loops (first, repeat), detention.
  const r0 = runs[0] as (typeof runs)[number];
  const fail = {
    rubricExit: 1,
    progressed: false,
    failing: 1,
    failingTests: [SENTINELS.test],
    firstError: SENTINELS.error,
    testsHash: SENTINELS.testsHash,
    treeId: SENTINELS.tree,
  };
  await call({ ...r0, runId: r0.run, loop: 0, kind: 'spec-check', agentStatus: 'pass', costUsd: 0.05 });
  await call({ ...r0, runId: r0.run, loop: 1, costUsd: 0.4 });
  await call({ ...r0, runId: r0.run, loop: 2, kind: 'retry', ...fail, verdict: 'first', costUsd: 0.35 });
  const stuckCall = await call({
    ...r0,
    runId: r0.run,
    loop: 3,
    kind: 'retry',
    ...fail,
    verdict: 'repeat',
    lessons: 1,
    denials: 2,
    costUsd: 0.95,
  });
  await call({ ...r0, runId: r0.run, loop: 4, kind: 'retry', ...fail, verdict: 'repeat', costUsd: 0.5 });
  const lessonId = await store.lessons.open({
    repo: t(r0.repo),
    ticket: t(r0.ticket),
    signature: h ?? `repeat: rubric failed (exit 1)\n${SENTINELS.error}`,
    runId: h ? `${h}${r0.run}` : r0.run,
    fingerprint: t(SENTINELS.testsHash),
    firstError: t(SENTINELS.error),
  });
  await store.lessons.resolve({
    id: lessonId,
    resolution: t(SENTINELS.note),
    lesson: t(SENTINELS.lesson),
    resolvedBy: t(`${SENTINELS.email} on ${SENTINELS.host}`),
    scope: 'repo',
  });
  await store.events.record(t(r0.repo), t(r0.ticket), 'detention');
  await store.decisions.record([
    {
      runId: h ? `${h}${r0.run}` : r0.run,
      callId: stuckCall,
      kind: 'stuck',
      question: t(SENTINELS.question),
      answer: 'yes',
      confidence: 0.93,
      threshold: 0.9,
      mode: 'shadow',
      latencyMs: 840,
      model: t(SENTINELS.deciderModel),
      url: h ? `https://decider.example/${encodeURIComponent(h)}` : SENTINELS.deciderUrl,
    },
    {
      runId: h ? `${h}${r0.run}` : r0.run,
      callId: stuckCall,
      kind: 'rerank',
      question: t(SENTINELS.question),
      mode: 'shadow',
      error: t(SENTINELS.deciderError),
      model: t(SENTINELS.deciderModel),
      url: h ? `https://decider.example/${encodeURIComponent(h)}` : SENTINELS.deciderUrl,
    },
  ]);
  // Run 2: progress, a review that fails, a fix, a passing review, submitted.
  const r1 = runs[1] as (typeof runs)[number];
  await call({ ...r1, runId: r1.run, loop: 1, costUsd: 0.2, flakyTests: [`${SENTINELS.test}_flaky`] });
  await call({ ...r1, runId: r1.run, loop: 2, costUsd: 0.25, model: SENTINELS.otherModel });
  await call({ ...r1, runId: r1.run, loop: 0, kind: 'review', agentStatus: 'fail', costUsd: 0.1 });
  await call({ ...r1, runId: r1.run, loop: 3, kind: 'fix-review', costUsd: 0.15 });
  await call({ ...r1, runId: r1.run, loop: 0, kind: 'review', agentStatus: 'pass', costUsd: 0.1 });
  await store.events.record(t(r1.repo), t(r1.ticket), 'submitted');
  // Run 3 (another repository): a blocker, then a distillation.
  const r2 = runs[2] as (typeof runs)[number];
  await call({
    ...r2,
    runId: r2.run,
    loop: 1,
    agentStatus: 'blocked',
    progressed: false,
    verdict: 'blocked',
    costUsd: 0.1,
  });
  await call({ ...r2, runId: r2.run, loop: 0, kind: 'distill', costUsd: 0.02 });
  return calls;
}
