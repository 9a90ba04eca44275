import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, startModelServer } from '../fakes/model-server.js';
import { chalkAsync, scratchRepo } from '../helpers/cli.js';
import { imagePresent } from './agent-container.js';
import { dockerReachable, TEST_IMAGE } from './sandbox-helpers.js';

/**
 * `chalk doctor` as a user runs it: the auto-mode line comes from the claude
 * CLI in the sandbox image, costs nothing (no message reaches the model) and
 * says what to set. Runs the built CLI asynchronously, so the fake model in
 * this process keeps answering.
 */
const available = (await dockerReachable()) && (await imagePresent());
if (process.env.CI === 'true' && !available) throw new Error(`CI needs the sandbox image ${TEST_IMAGE}`);

/** `chalk doctor` with the test image, stdout and stderr as one text. */
async function doctor(cwd: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const r = await chalkAsync(['doctor'], { cwd, env: { CHALK_IMAGE: TEST_IMAGE, ...env } });
  return { code: r.code, out: r.stdout + r.stderr };
}

const autoLine = (out: string) => out.split('\n').find((l) => l.includes('auto mode for')) ?? '';

describe.skipIf(!available)('chalk doctor: auto mode', { timeout: 180_000 }, () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(() => model?.close());

  it('asks the CLI in the image, spends nothing, and warns about a gateway', async () => {
    const repo = scratchRepo('doc');
    const r = await doctor(repo, {
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
      CHALK_MODEL: 'opus',
    });
    expect(autoLine(r.out)).toMatch(/^\s*ok\s+auto mode for opus: .*CHALK_PERMISSION_MODE=bypass/);
    expect(model.requests.filter((q) => q.path === '/v1/messages')).toEqual([]);
    expect(r.out).not.toContain('sk-ant-test-dummy');
  });

  it('does not ask in bypass mode', async () => {
    const repo = scratchRepo('doc');
    const r = await doctor(repo, { ANTHROPIC_API_KEY: 'sk-ant-test-dummy', CHALK_PERMISSION_MODE: 'bypass' });
    expect(autoLine(r.out)).toMatch(
      /^\s*--\s+auto mode for the default model: auto mode not used \(CHALK_PERMISSION_MODE=bypass\)/,
    );
  });
});
