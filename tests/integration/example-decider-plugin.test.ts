import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plugin } from '../../core/plugin.js';
import { answerAll, FakeDecider } from '../fakes/decider-server.js';
import { buildExamplePlugin } from '../helpers/example-plugin.js';

const ROOT = join(import.meta.dirname, '..', '..');
const TICKET = 'PROJ-9';

/**
 * examples/decider-plugin as its author tests it: compiled against the published declarations
 * (`strict`, `skipLibCheck: false`), then run through `chalk-harness/testing` (the built entry,
 * as a third party imports it) with no engine: offered by name, bound by core's selection
 * (CHALK_DECIDER_PROVIDER=example), asked the loop's stuck question over decider protocol v1
 * by core's own tap, and its `onVerdict` tap runs on every failed loop.
 */
describe('the example third-party decider, through chalk-harness/testing', { timeout: 120_000 }, () => {
  let built: ReturnType<typeof buildExamplePlugin>;
  let fake: FakeDecider;
  beforeAll(async () => {
    built = buildExamplePlugin('decider-plugin');
    fake = await new FakeDecider({ script: (req) => ({ body: answerAll(req, 0.97, 'example-v1') }) }).start();
  });
  afterAll(async () => {
    await fake?.stop();
  });

  it('compiles with no error, and is bound, asked and tapped in a run', async () => {
    expect(built.tsc.output).toBe('');
    expect(built.tsc.code).toBe(0);
    const testing = (await import(
      pathToFileURL(join(ROOT, 'dist', 'core', 'testing', 'index.js')).href
    )) as typeof import('../../core/testing/index.js');
    const plugin = ((await import(pathToFileURL(built.entry).href)) as { default: Plugin }).default;

    const repo = testing.makeTicketRepo({
      ticket: TICKET,
      prefix: 'chalk-example-decider-',
      rubric: "echo 'FAILED tests/test_x.py::test_x - AssertionError: x is not ok'; exit 1\n",
      spec: `# ${TICKET}: make x\n\n- [ ] step 1: write x.txt\n`,
      env: {
        // The rubric fails until the agent's work is there, so the base would be red: no base check.
        CHALK_BASELINE: 'off',
        CHALK_MAX_RETRIES: '2',
        CHALK_DECIDER: 'shadow',
        CHALK_DECIDER_PROVIDER: 'example',
        CHALK_EXAMPLE_DECIDER_URL: fake.url,
      },
    });
    try {
      let n = 0;
      const tries = async (c: { write(path: string, text: string): Promise<void> }) => {
        n += 1;
        await c.write('x.txt', `attempt ${n}\n`);
        return { answer: { status: 'done' as const, summary: 'tried' } };
      };
      const agent = new testing.ScriptedAgent().script('continue', tries).script('retry', tries, tries);
      const t = await testing.createTestKernel({ root: repo.root, env: repo.env, agent, plugins: [plugin] });
      expect(t.kernel.selected.get('Decider')).toBe('example');

      const r = await testing.runTicket(t.deps(), { root: repo.root });
      expect(r.exitCode, t.log.text()).toBe(3);
      // The plugin's own tap saw each failed loop's verdict.
      const tapped = t.log.lines.filter((l) => l.text.startsWith('decider-example: loop '));
      expect(tapped.map((l) => l.text.replace(/verdict \S+$/, 'verdict'))).toEqual([
        'decider-example: loop 1 verdict',
        'decider-example: loop 2 verdict',
        'decider-example: loop 3 verdict',
      ]);
      // Core's stuck tap asked it after loops 2 and 3 (each repeats the one before) over the protocol, which
      // the fake checks, and recorded its answers.
      expect(fake.violations).toEqual([]);
      expect(fake.requests).toHaveLength(2);
      expect(t.store.tables.decisions.map((d) => [d.model, d.mode])).toEqual(
        fake.requests.map(() => ['example-v1', 'shadow']),
      );
    } finally {
      repo.remove();
    }
  });
});
