import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerAll, FakeDecider } from '../fakes/decider-server.js';
import { tempDir } from '../helpers/cli.js';
import { buildExamplePlugin } from '../helpers/example-plugin.js';
import {
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  events,
  expectDetainedWith,
  explain,
  failingLoop,
  makeScenario,
  type Rig,
  reviewPass,
  startRig,
} from './harness.js';

/**
 * The example third-party plugins, built against the published declarations and loaded by the
 * real CLI from CHALK_PLUGINS, in full runs in the real sandbox:
 * - examples/forge-plugin opens the request: CHALK_FORGE=file selects its forge, which writes
 *   the request into CHALK_FILE_FORGE_DIR, and its command lists it;
 * - examples/decider-plugin is asked the stuck question: CHALK_DECIDER_PROVIDER=example selects
 *   its decider, which speaks the protocol to the protocol-checking fake decider.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('chalk run with third-party plugins', { timeout: 300_000 }, () => {
  let rig: Rig;
  let plugin: ReturnType<typeof buildExamplePlugin>;
  let deciderPlugin: ReturnType<typeof buildExamplePlugin>;
  let fake: FakeDecider | undefined;
  beforeAll(async () => {
    plugin = buildExamplePlugin();
    deciderPlugin = buildExamplePlugin('decider-plugin');
    rig = await startRig();
  });
  afterAll(async () => {
    await fake?.stop();
    await rig?.close();
  });

  it('its forge, chosen by CHALK_FORGE=file, opens the request; its command lists it', async () => {
    expect(plugin.tsc.code, plugin.tsc.output).toBe(0);
    const sc = makeScenario({ checkpoints: 1 });
    const requests = tempDir('chalk-file-forge-');
    const env = { CHALK_PLUGINS: plugin.entry, CHALK_FORGE: 'file', CHALK_FILE_FORGE_DIR: requests };
    rig.script({ loops: [doCheckpoint(sc.ticket, 1)], reviews: [reviewPass('The script prints hello.')] });
    const r = await chalk(rig, sc, ['run'], { env });
    expect(r.code, explain(r)).toBe(0);
    expect(rig.model.violations).toEqual([]);

    // Pushed, and the request written by the plugin's forge, not by gh.
    expect(sc.originBranches()).toContain(sc.branch);
    expect(sc.forge.requests()).toEqual([]);
    const req = JSON.parse(readFileSync(join(requests, 'request-1.json'), 'utf8')) as Record<string, unknown>;
    expect(req).toMatchObject({ n: 1, branch: sc.branch, base: 'main', repoRoot: sc.root });
    expect(String(req.title)).toContain(sc.ticket);
    expect(String(req.body)).toContain('The script prints hello.');
    expect(r.lines).toContain(`request opened: file://${join(requests, 'request-1.json')}`);

    const list = await chalk(rig, sc, ['file-forge', 'list'], { env });
    expect(list.code, explain(list)).toBe(0);
    expect(list.stdout).toContain(`1\t${sc.branch} -> main\t`);

    expect(await containers(sc)).toEqual([]);
    expect((await calls(rig, sc)).map((c) => c.kind)).toEqual(['spec-check', 'continue', 'review']);
    expect(await events(rig, sc)).toEqual(['submitted']);
    sc.dispose();
  });

  it('its decider, chosen by CHALK_DECIDER_PROVIDER=example, is asked the stuck question; its tap runs', async () => {
    expect(deciderPlugin.tsc.code, deciderPlugin.tsc.output).toBe(0);
    fake = await new FakeDecider({ script: (req) => ({ body: answerAll(req, 0.97, 'example-v1') }) }).start();
    const sc = makeScenario();
    rig.script({
      loops: [
        failingLoop(sc.ticket),
        failingLoop(sc.ticket, { body: 'echo hullo', ticks: false }),
        failingLoop(sc.ticket, { body: 'echo helo', ticks: false }),
      ],
    });
    const env = {
      CHALK_PLUGINS: deciderPlugin.entry,
      CHALK_SPEC_CHECK: 'false',
      CHALK_DECIDER: 'shadow',
      CHALK_DECIDER_PROVIDER: 'example',
      CHALK_EXAMPLE_DECIDER_URL: fake.url,
    };
    const r = await chalk(rig, sc, ['run'], { env });
    expectDetainedWith(r, /^DETENTION: rubric failed \(exit 1\)$/);
    // Its onVerdict tap ran after every failed loop (its lines are its own, not the run's).
    expect(r.stdout.split('\n').filter((l) => l.startsWith('decider-example: '))).toEqual([
      'decider-example: loop 1 verdict first',
      'decider-example: loop 2 verdict other',
      'decider-example: loop 3 verdict other',
    ]);
    expect(fake.violations).toEqual([]);
    expect(fake.requests).toHaveLength(2);
    const rows = await rig.sql<{ answer: string | null; mode: string; model: string }>(
      `SELECT d.answer, d.mode, d.model FROM decisions d JOIN runs c ON c.id = d.call_id
       WHERE c.repo = $1 AND c.ticket = $2 ORDER BY d.id`,
      [sc.repo, sc.ticket],
    );
    expect(rows.map((d) => [d.answer, d.mode, d.model])).toEqual([
      ['yes', 'shadow', 'example-v1'],
      ['yes', 'shadow', 'example-v1'],
    ]);
    expect(await containers(sc)).toEqual([]);
    sc.dispose();
  });
});
