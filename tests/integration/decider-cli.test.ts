import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../core/store/index.js';
import { FakeDecider } from '../fakes/decider-server.js';
import { chalkAsync, scratchRepo, tempDir } from '../helpers/cli.js';
import { BACKENDS } from './store/backends.js';

/**
 * `chalk decider status [--json]` and `chalk doctor` as a user runs them: the
 * mode, provider, URL without credentials, trust, health, model and revision,
 * and the calibration numbers from the store; an untrusted remote address is
 * sent nothing, not even the health check, until it is trusted.
 */
/** The built CLI, run without blocking this process: the fake decider answers from its event loop. */
const chalk = chalkAsync;

const postgres = BACKENDS.find((b) => b.name === 'postgres');
const remoteIp = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === 'IPv4')?.address;

describe.skipIf(!postgres || !remoteIp)('chalk decider status and doctor', { timeout: 120_000 }, () => {
  let db: Awaited<ReturnType<NonNullable<typeof postgres>['fresh']>>;
  const fakes: FakeDecider[] = [];
  beforeAll(async () => {
    db = await (postgres as NonNullable<typeof postgres>).fresh();
  });
  afterEach(async () => {
    for (const f of fakes.splice(0)) await f.stop();
  });
  afterAll(async () => {
    await db?.dispose();
  });

  const MODEL = 'strands-decider-2B-hobson-v19';
  const health = { body: { status: 'ok', model: MODEL, revision: 'abc123', protocol: 1 } };
  const env = (url: string, extra: Record<string, string> = {}) => ({
    XDG_STATE_HOME: join(tempDir(), 'state'),
    CHALK_DATABASE_URL: db.env.CHALK_DATABASE_URL,
    CHALK_DECIDER_URL: url,
    ...extra,
  });

  it('sends an untrusted remote decider nothing, not even /health, and says what it would receive', async () => {
    const f = await new FakeDecider({ health }).start(0, remoteIp);
    fakes.push(f);
    const repo = scratchRepo();
    const e = env(f.url, { CHALK_DECIDER: 'shadow', CHALK_DECIDER_TOKEN: 'zq9tok-status-secret' });
    const status = await chalk(['decider', 'status'], { cwd: repo, env: e });
    expect(status.stdout).toContain(`trust     untrusted`);
    expect(status.stdout).toMatch(/health {4}not checked: CHALK_DECIDER_URL .* was never trusted/);
    expect(status.stdout).toContain('POST /v1/systemone');
    const json = JSON.parse((await chalk(['decider', 'status', '--json'], { cwd: repo, env: e })).stdout);
    expect(json).toMatchObject({ mode: 'shadow', provider: 'hosted', url: f.url, trust: 'untrusted', health: null });
    const doctor = await chalk(['doctor'], { cwd: repo, env: e });
    expect(doctor.stdout).toMatch(/decider calibration.*CHALK_DECIDER=shadow, provider hosted, .* \(untrusted\)/);
    expect(f.connections).toBe(0);
    for (const out of [status, doctor]) expect(`${out.stdout}${out.stderr}`).not.toContain('zq9tok');

    // Trusted on this machine: the health check goes out, with the token, and its model and revision are shown.
    expect((await chalk(['decider', 'trust', f.url], { cwd: repo, env: e })).code).toBe(0);
    const trusted = await chalk(['decider', 'status', '--json'], { cwd: repo, env: e });
    expect(trusted.code).toBe(0);
    expect(JSON.parse(trusted.stdout)).toMatchObject({
      trust: 'trusted',
      health: { healthy: true, via: 'health' },
      model: MODEL,
      revision: 'abc123',
    });
    expect(f.healthCalls).toBe(1);
    expect(f.requests).toHaveLength(0);
    expect(trusted.stdout).not.toContain('zq9tok');
  });

  it('shows the calibration numbers per model from the store, and probes a decider without /health', async () => {
    const f = await new FakeDecider({ model: MODEL }).start();
    fakes.push(f);
    const store = await PgStore.open(db.target, 60_000);
    try {
      const loopCall = (runId: string, ticket: string, loop: number, progressed: boolean) =>
        store.calls.record({
          repo: 'status',
          ticket,
          branch: 'b',
          loop,
          kind: 'retry',
          agentStatus: 'ok',
          rubricExit: progressed ? 0 : 1,
          progressed,
          model: 'claude',
          prompts: 'x',
          costUsd: 0,
          budgetUsd: 1,
          durationS: 1,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          turns: 1,
          denials: 0,
          lessons: 0,
          runId,
        });
      // 21 judged: 19 right (detained, no later progress), 2 false stops (a later loop progressed).
      for (let i = 0; i < 21; i++) {
        const runId = `ST-${i}-1`;
        const callId = await loopCall(runId, `ST-${i}`, 2, false);
        await store.decisions.record([
          {
            runId,
            callId,
            kind: 'stuck',
            question: 'stuck',
            answer: 'yes',
            confidence: 0.95,
            mode: 'shadow',
            model: MODEL,
            url: f.url,
          },
        ]);
        if (i < 19) await store.lessons.open({ repo: 'status', ticket: `ST-${i}`, signature: 's', runId });
        else await loopCall(runId, `ST-${i}`, 3, true);
      }
    } finally {
      await store.close();
    }
    const repo = scratchRepo();
    const e = env(f.url, { CHALK_DECIDER: 'on' });
    const status = await chalk(['decider', 'status', '--json'], { cwd: repo, env: e });
    const s = JSON.parse(status.stdout);
    expect(s).toMatchObject({ mode: 'on', trust: 'local', health: { healthy: true, via: 'probe' }, model: MODEL });
    expect(s.calibration.models).toEqual([
      expect.objectContaining({ model: MODEL, judged: 21, correct: 19, falseStops: 2, passes: true, threshold: 0.9 }),
    ]);
    // One probe question, with 2 seconds of its own: never recorded as a loop's decision.
    expect(f.requests.map((r) => Object.keys(r.questions))).toEqual([['health']]);
    const text = await chalk(['decider', 'status'], { cwd: repo, env: e });
    expect(text.stdout).toContain(
      `calibration ${MODEL} at ${f.url}: 21 judged shadow answers at 0.9 (19 right, 2 false stops, 90% right; 0 waiting), suggested threshold 0.95; calibrated: CHALK_DECIDER=on acts`,
    );
    const doctor = await chalk(['doctor'], { cwd: repo, env: e });
    expect(doctor.stdout).toMatch(/ok +decider calibration.*21 judged/);
  });
});
