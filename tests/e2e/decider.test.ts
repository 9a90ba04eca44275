import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerAll, FakeDecider } from '../fakes/decider-server.js';
import {
  chalk,
  databaseText,
  e2eAvailable,
  expectDetainedWith,
  explain,
  failingLoop,
  makeScenario,
  nextLines,
  type Rig,
  readIo,
  type Scenario,
  secretValue,
  startRig,
  stateText,
} from './harness.js';

/**
 * The decider at work, end to end: the real CLI, a real container, the
 * scripted model, and the protocol-checking fake decider answering "stuck"
 * with a confident yes. Three loops fail the same test with different trees
 * (first, spinning, spinning); without the decider the run is detained after
 * the third as `rubric failed (exit 1)`.
 */
const available = await e2eAvailable();
const MODEL = 'fake-decider-v1';

describe.skipIf(!available)('chalk run, end to end: the stuck question', { timeout: 300_000 }, () => {
  let rig: Rig;
  const fakes: FakeDecider[] = [];
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    for (const f of fakes) await f.stop();
    await rig?.close();
  });

  const confidentYes = async (token?: string) => {
    const f = await new FakeDecider({
      script: (req) => ({ body: answerAll(req, 0.97, MODEL) }),
      ...(token ? { token } : {}),
    }).start();
    fakes.push(f);
    return f;
  };
  const spinning = (sc: Scenario) =>
    rig.script({
      loops: [
        failingLoop(sc.ticket),
        failingLoop(sc.ticket, { body: 'echo hullo', ticks: false }),
        failingLoop(sc.ticket, { body: 'echo helo', ticks: false }),
      ],
    });
  const rows = (sc: Scenario) =>
    rig.sql<{ loop: number; answer: string | null; mode: string; acted: boolean; model: string; call_id: string }>(
      `SELECT c.loop, d.answer, d.mode, d.acted, d.model, d.call_id FROM decisions d
       JOIN runs c ON c.id = d.call_id WHERE c.repo = $1 AND c.ticket = $2 ORDER BY d.id`,
      [sc.repo, sc.ticket],
    );
  const decisionsIo = (sc: Scenario) =>
    readIo(rig, sc, 'decisions.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  const started = (r: { lines: string[] }) => r.lines.filter((l) => / started$/.test(l));

  it('in shadow, a confident stuck answer changes nothing but the record; the token is only a header', async () => {
    const token = secretValue('decidertoken');
    const f = await confidentYes(token);
    const sc = makeScenario();
    spinning(sc);
    const r = await chalk(rig, sc, ['run'], {
      env: { CHALK_SPEC_CHECK: 'false', CHALK_DECIDER: 'shadow', CHALK_DECIDER_URL: f.url, CHALK_DECIDER_TOKEN: token },
    });
    expect(f.authHeaders).toEqual([`Bearer ${token}`, `Bearer ${token}`]);
    expect(`${r.stdout}${r.stderr}`).not.toContain(token);
    expect(await databaseText(rig)).not.toContain(token);
    expect(stateText(rig, sc.ticket)).not.toContain(token);
    expectDetainedWith(r, /^DETENTION: rubric failed \(exit 1\)$/);
    expect(started(r)).toEqual(['loop 1 (continue) started', 'loop 2 (retry) started', 'loop 3 (retry) started']);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/decider/i);
    expect(f.violations).toEqual([]);
    expect(f.requests).toHaveLength(2);
    expect((await rows(sc)).map((d) => [d.answer, d.mode, d.acted, d.model])).toEqual([
      ['yes', 'shadow', false, MODEL],
      ['yes', 'shadow', false, MODEL],
    ]);
    expect(decisionsIo(sc).map((l) => [l.tags.kind, l.tags.loop, l.tags.mode])).toEqual([
      ['stuck', '2', 'shadow'],
      ['stuck', '3', 'shadow'],
    ]);
    sc.dispose();
  });

  it('in on but uncalibrated, it behaves as shadow and says so once', async () => {
    const f = await confidentYes();
    const sc = makeScenario();
    spinning(sc);
    const r = await chalk(rig, sc, ['run'], {
      env: { CHALK_SPEC_CHECK: 'false', CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url },
    });
    expectDetainedWith(r, /^DETENTION: rubric failed \(exit 1\)$/);
    expect(started(r)).toHaveLength(3);
    const said = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes('CHALK_DECIDER=on acts as shadow'));
    expect(said, explain(r)).toHaveLength(1);
    expect(said[0]).toContain(`${MODEL} at ${f.url} is not calibrated yet: 0 judged shadow answers at 0.9`);
    expect((await rows(sc)).map((d) => [d.mode, d.acted])).toEqual([
      ['shadow', false],
      ['shadow', false],
    ]);
    sc.dispose();
  });

  it('in on and calibrated, a confident stuck answer detains the real run at once', async () => {
    const f = await confidentYes();
    // 20 judged shadow answers of this decider and model, every one right: the run was detained, nothing progressed.
    for (let i = 0; i < 20; i++) {
      const runId = `CAL-${i}-1700000000`;
      await rig.sql(
        `INSERT INTO decisions (run_id, kind, question, answer, confidence, threshold, mode, model, url)
         VALUES ($1, 'stuck', 'stuck', 'yes', 0.95, 0.9, 'shadow', $2, $3)`,
        [runId, MODEL, f.url],
      );
      await rig.sql(`INSERT INTO lessons (repo, ticket, signature, run_id) VALUES ('calibration', $1, 'x', $2)`, [
        `CAL-${i}`,
        runId,
      ]);
    }
    const where = makeScenario();
    const status = await chalk(rig, where, ['decider', 'status', '--json'], {
      env: { CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url },
    });
    const s = JSON.parse(status.stdout);
    expect(s.calibration, explain(status)).toMatchObject({ known: true, calibrated: true });
    expect(s.calibration.models[0]).toMatchObject({ model: MODEL, judged: 20, correct: 20, passes: true });
    expect(s).toMatchObject({ mode: 'on', provider: 'hosted', url: f.url, trust: 'local', model: MODEL });
    where.dispose();

    const sc = makeScenario();
    spinning(sc);
    const r = await chalk(rig, sc, ['run'], {
      env: { CHALK_SPEC_CHECK: 'false', CHALK_DECIDER: 'on', CHALK_DECIDER_URL: f.url },
    });
    expectDetainedWith(r, /^DETENTION: stuck: rubric failed \(exit 1\)$/);
    expect(started(r)).toEqual(['loop 1 (continue) started', 'loop 2 (retry) started']);
    expect(nextLines(r)[0]).toContain('confidence 0.97');
    expect(`${r.stdout}${r.stderr}`).not.toContain('acts as shadow');
    const recorded = await rows(sc);
    expect(recorded.map((d) => [d.loop, d.answer, d.mode, d.acted])).toEqual([[2, 'yes', 'on', true]]);
    sc.dispose();
  });
});
