import { afterAll, beforeAll, describe, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import { e2eAvailable, type Rig, startRig } from './harness.js';
import { stackStory } from './stacks.js';

/**
 * kermage/dotenv-extra (TypeScript, pnpm pinned by packageManager, vitest, prettier) through
 * init, a detention, office hours and a request. Its dependencies come from the npm registry
 * in the sandbox (the setup command init wrote).
 */
const available = await e2eAvailable();

const UPPER = (method: string) => `/** The same variables with upper-case names, as most shells expect them. */
export function upperKeys(vars: Record<string, string>): Record<string, string> {
	return Object.fromEntries(
		Object.entries(vars).map(([key, value]) => [key.${method}(), value]),
	);
}
`;

const UPPER_TEST = `import { describe, expect, it } from 'vitest';
import { upperKeys } from './upper';

describe('upperKeys', () => {
	it('upper-cases every name', () => {
		expect(upperKeys({ port: '80' })).toEqual({ PORT: '80' });
	});
});
`;

describe.skipIf(!available)('a TypeScript library, as it is', { timeout: 900_000 }, () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('init finds pnpm from packageManager and its test script; no toolchain beyond the default image; detention, office hours, request', async () => {
    const times = await stackStory(rig, {
      bundle: 'dotenv-extra.bundle',
      ticket: 'ENV-1',
      checkpoint: 'upperKeys upper-cases variable names, with a test',
      initSays: [
        '  found    Node.js package (pnpm@10.8.1) (package.json)',
        '  found    test command: npx --yes pnpm@10.8.1 test (package.json scripts.test)',
        '  found    setup command: npx --yes pnpm@10.8.1 install --frozen-lockfile (package.json packageManager)',
        "  found    base branch: main (origin's HEAD)",
      ],
      broken: [
        s.write('/work/repo/src/upper.ts', UPPER('toLowerCase')),
        s.write('/work/repo/src/upper.test.ts', UPPER_TEST),
      ],
      failingTest: 'src/upper.test.ts > upperKeys > upper-cases every name',
      assertion: /expected \{ port: '80' \} to deeply equal \{ PORT: '80' \}/,
      fix: { file: 'src/upper.ts', from: 'key.toLowerCase()', to: 'key.toUpperCase()' },
      image: /^sandbox image chalk-sandbox:local: the default: no CHALK_IMAGE, dev container or CHALK_TOOLCHAIN$/,
    });
    process.stdout.write(`typescript story: detained in ${times.detainedMs} ms, request in ${times.requestMs} ms\n`);
  });
});
