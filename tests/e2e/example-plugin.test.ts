import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { buildExamplePlugin } from '../helpers/example-plugin.js';
import {
  calls,
  chalk,
  containers,
  doCheckpoint,
  e2eAvailable,
  events,
  explain,
  makeScenario,
  type Rig,
  reviewPass,
  startRig,
} from './harness.js';

/**
 * The example third-party plugin (examples/forge-plugin), built against the
 * published declarations and loaded by the real CLI from CHALK_PLUGINS, opens
 * the request of a full run in the real sandbox: CHALK_FORGE=file selects its
 * forge, which writes the request into CHALK_FILE_FORGE_DIR, and its command lists it.
 */
const available = await e2eAvailable();

describe.skipIf(!available)('chalk run with a third-party forge plugin', { timeout: 300_000 }, () => {
  let rig: Rig;
  let plugin: ReturnType<typeof buildExamplePlugin>;
  beforeAll(async () => {
    plugin = buildExamplePlugin();
    rig = await startRig();
  });
  afterAll(async () => {
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
});
