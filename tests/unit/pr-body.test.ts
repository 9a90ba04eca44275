import { describe, expect, it } from 'vitest';
import { createHooks } from '../../core/kernel/hooks.js';
import type { Log } from '../../core/ports/log.js';
import { buildPrBody, inlineCode, type PrBodyInput, prBody, requestTitle } from '../../core/run/endings/pr-body.js';

const input = (extra: Partial<PrBodyInput> = {}): PrBodyInput => ({
  ticket: 'SHOP-7',
  loops: 3,
  costUsd: 0.4567,
  specPath: 'specs/SHOP-7.md',
  checkpoints: 2,
  humanInterventions: 1,
  rubricCommand: 'npm test',
  reviewSummary: 'Adds a limiter with tests. No problems found.',
  ...extra,
});

describe('the request body', () => {
  it('summarises the spec, loops, cost, interventions, rubric and review', () => {
    expect(prBody(input())).toBe(
      [
        '## Chalk run summary',
        '',
        '- Spec: `specs/SHOP-7.md`, all 2 checkpoints ticked',
        '- Agent loops: 3',
        '- Agent cost: $0.46',
        '- Human interventions (office hours): 1',
        '- Rubric: `npm test` passed in the sandbox',
        "- Review before submission, in the reviewing agent's words: `Adds a limiter with tests. No problems found.`",
        '',
        'An agent wrote this change. Review the diff as carefully as you would any other.',
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['no review', { reviewSummary: null }],
    ['an empty review summary', { reviewSummary: '  \n' }],
  ])('leaves the review out with %s', (_name, extra) => {
    const body = prBody(input(extra));
    expect(body).not.toContain('Review before submission');
    expect(body).toContain('- Rubric: `npm test` passed in the sandbox\n\nAn agent wrote');
  });

  it('under CHALK_BASELINE=known names the failures there before, as code, at most 20', () => {
    const before = Array.from({ length: 22 }, (_, i) => `tests/t.py::test_${i}`);
    const body = prBody(input({ baselineFailures: ['tests/t.py::test_`x`', ...before.slice(1)] }));
    expect(body).toContain(
      '- Rubric: `npm test` adds no failing test in the sandbox. Failing before this change, on the base branch (CHALK_BASELINE=known): `` tests/t.py::test_`x` ``, `tests/t.py::test_1`,',
    );
    expect(body).toContain('`tests/t.py::test_19` and 2 more\n');
    expect(body).not.toContain('test_20`');
  });

  it('shows the review as one line of inert text in a code span, whatever it holds', () => {
    const body = prBody(
      input({ reviewSummary: 'First paragraph.\n\nSecond `x` paragraph,\n## Sign-off\n@team <img src=x>' }),
    );
    expect(body).toContain(
      "- Review before submission, in the reviewing agent's words: ``First paragraph. Second `x` paragraph, ## Sign-off @team <img src=x>``\n\nAn agent",
    );
    expect(prBody(input({ reviewSummary: 'x'.repeat(5000) }))).toContain(`\`${'x'.repeat(1999)}…\``);
  });

  it('formats cost and counts', () => {
    expect(prBody(input({ costUsd: 0 }))).toContain('- Agent cost: $0.00');
    expect(prBody(input({ costUsd: 12.345 }))).toContain('- Agent cost: $12.35');
    expect(prBody(input({ costUsd: Number.NaN }))).toContain('- Agent cost: $0.00');
    expect(prBody(input({ checkpoints: 1 }))).toContain('all 1 checkpoint ticked');
  });

  it.each([
    ['npm test', '`npm test`'],
    ['echo `date` && make', '``echo `date` && make``'],
    ['`cmd`', '`` `cmd` ``'],
    ['a ``b`` c', '```a ``b`` c```'],
  ])('quotes the rubric %s as %s', (cmd, code) => {
    expect(inlineCode(cmd)).toBe(code);
  });

  it('takes the title from the spec, or the ticket', () => {
    expect(requestTitle('# SHOP-7: Add rate limiting\n\n## Context\n', 'SHOP-7')).toBe('SHOP-7: Add rate limiting');
    expect(requestTitle('no heading\n', 'SHOP-7')).toBe('SHOP-7');
  });
});

describe('the prBody hook', () => {
  const warnings: string[] = [];
  const log: Log = {
    info() {},
    warn: (l: string) => {
      warnings.push(l);
    },
    error() {},
    debug() {},
    child: () => log,
  };

  it('starts from the built body and lets taps rewrite it, skipping a failing tap', async () => {
    const hooks = createHooks(log);
    hooks.prBody.tapPromise('adds-footer', async (body, ctx) => `${body}\nTicket: ${ctx.ticket}, ${ctx.loops} loops\n`);
    hooks.prBody.tapPromise('broken', async () => {
      throw new Error('nope');
    });
    const body = await buildPrBody(hooks, input());
    expect(body.startsWith('## Chalk run summary\n')).toBe(true);
    expect(body.endsWith('any other.\n\nTicket: SHOP-7, 3 loops\n')).toBe(true);
    expect(warnings.some((w) => w.includes('broken'))).toBe(true);
  });

  it("gives taps the run's numbers, never the model's raw text", async () => {
    const hooks = createHooks(log);
    let seen: unknown;
    hooks.prBody.tapPromise('reads', async (body, ctx) => {
      seen = ctx;
      return body;
    });
    await buildPrBody(hooks, input({ reviewSummary: '@team <img src=https://evil.example/p.gif>' }));
    // Everything the body was built from but the review's words; read-only.
    expect(seen).toEqual({
      ticket: 'SHOP-7',
      loops: 3,
      costUsd: 0.4567,
      specPath: 'specs/SHOP-7.md',
      checkpoints: 2,
      humanInterventions: 1,
      rubricCommand: 'npm test',
    });
    expect(Object.isFrozen(seen)).toBe(true);
  });

  it('is the built body when nothing taps it', async () => {
    expect(await buildPrBody(createHooks(log), input())).toBe(prBody(input()));
  });
});
