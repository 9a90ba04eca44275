import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { denialNextStep, denialNote, deniedTools, MANY_DENIALS } from '../../core/agent/denials.js';
import { costText, formatUsd, parseResult } from '../../core/agent/result.js';

/** Result objects captured from claude 2.1.332 driven by tests/fakes/model-server.ts. */
const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, 'agent-fixtures', `result-${name}.json`), 'utf8');
const run = (stdout: string, exitCode = 0) => ({ stdout, exitCode, stderr: '', durationMs: 5 });

describe('parseResult on real CLI results', () => {
  it.each([
    // name, exit, status, answer, cost, turns, denials
    ['done', 0, 'ok', { status: 'done', checkpoint: '1', summary: 'did things', blocker: '' }, 0.004, 6, 0],
    ['budget', 1, 'error_max_budget_usd', 'none', 30, 1, 0],
    ['malformed', 0, 'ok', 'none', 0.0032, 4, 0],
    ['ro', 0, 'ok', { status: 'done', checkpoint: '1', summary: 'x', blocker: '' }, 0.0032, 5, 2],
  ] as const)('%s', (name, exit, status, answer, cost, turns, denials) => {
    const r = parseResult('continue', run(fixture(name), exit), '');
    expect(r.status).toBe(status);
    expect(r.answer).toEqual(answer);
    expect(r.costUsd).toBeCloseTo(cost, 6);
    expect(r.usage.turns).toBe(turns);
    expect(r.denials).toHaveLength(denials);
    expect(r.model).toBe('claude-opus-5-5');
    expect(r.exitCode).toBe(exit);
  });

  it('reads usage tokens', () => {
    const r = parseResult('continue', run(fixture('done')), '');
    expect(r.usage).toEqual({
      inputTokens: 500,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      turns: 6,
    });
  });

  it('sums the per-model tokens when a budget stop zeroes the usage', () => {
    const r = parseResult('continue', run(fixture('budget'), 1), '');
    expect(r.usage).toEqual({
      inputTokens: 5_000_000,
      outputTokens: 500_000,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      turns: 1,
    });
  });

  it('names the refused tools', () => {
    const r = parseResult('review', run(fixture('ro')), 'haiku');
    expect(r.denials.map((d) => d.tool)).toEqual(['Bash', 'Write']);
    expect(r.denials[0]?.input).toMatchObject({ command: 'rm a.txt' });
    expect(deniedTools(r)).toBe('Bash, Write');
  });
});

describe('parseResult on odd output', () => {
  const ok = { type: 'result', is_error: false, subtype: 'success' };
  it.each<[string, string, number, Record<string, unknown>]>([
    ['empty stdout, exit 0', '', 0, { status: 'error', answer: 'none', costUsd: 0, model: 'sonnet' }],
    ['not JSON, exit 1', 'Error: boom', 1, { status: 'error', answer: 'none' }],
    ['exit non-zero without is_error', JSON.stringify(ok), 2, { status: 'error' }],
    ['is_error without subtype', JSON.stringify({ is_error: true }), 1, { status: 'error' }],
    [
      'max turns',
      JSON.stringify({ is_error: true, subtype: 'error_max_turns', num_turns: 50 }),
      1,
      { status: 'error_max_turns' },
    ],
    [
      'a weird subtype is not echoed',
      JSON.stringify({ is_error: true, subtype: 'x; rm -rf /' }),
      1,
      { status: 'error' },
    ],
    ['a cost that is not a number', JSON.stringify({ ...ok, total_cost_usd: '1e999x' }), 0, { costUsd: 0 }],
    ['a negative cost', JSON.stringify({ ...ok, total_cost_usd: -1 }), 0, { costUsd: 0 }],
    [
      'null usage',
      JSON.stringify({ ...ok, usage: null, num_turns: null }),
      0,
      { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, turns: 0 } },
    ],
    [
      'a structured answer of the wrong kind',
      JSON.stringify({ ...ok, structured_output: { verdict: 'pass' } }),
      0,
      { answer: 'none' },
    ],
    [
      'noise before the result line',
      `warning: something\n${JSON.stringify({ ...ok, structured_output: { status: 'done', summary: 's' } })}\n`,
      0,
      { status: 'ok', answer: { status: 'done', summary: 's' } },
    ],
    [
      'model with the highest cost',
      JSON.stringify({
        ...ok,
        modelUsage: { 'claude-haiku-5': { costUSD: 0.01 }, 'claude-opus-5-5': { costUSD: 0.5 } },
      }),
      0,
      { model: 'claude-opus-5-5' },
    ],
    ['no model usage falls back to the requested model', JSON.stringify(ok), 0, { model: 'sonnet' }],
  ])('%s', (_name, stdout, exit, expected) => {
    expect(parseResult('continue', run(stdout, exit), 'sonnet')).toMatchObject(expected);
  });

  it('falls back to "default" when no model was asked for', () => {
    expect(parseResult('continue', run('{}'), '').model).toBe('default');
  });
});

describe('money', () => {
  it.each([
    [0, '$0.00'],
    [0.004, '<$0.01'],
    [0.005, '$0.01'],
    [1.5, '$1.50'],
    [Number.NaN, '$NaN'],
  ])('%s -> %s', (usd, shown) => expect(formatUsd(usd)).toBe(shown));
  it('keeps four decimals for the record', () => expect(costText(0.00008)).toBe('0.0001'));
});

describe('refused actions', () => {
  const denials = (n: number) => ({ denials: Array.from({ length: n }, () => ({ tool: 'Bash', input: {} })) });
  it.each([
    [0, undefined, undefined],
    [1, '  1 action was refused by permission checks; see io/loop.json', undefined],
    [
      MANY_DENIALS,
      `  ${MANY_DENIALS} actions were refused by permission checks; see io/loop.json`,
      /run: chalk doctor$/,
    ],
  ])('%s denials', (n, note, next) => {
    expect(denialNote(denials(n), 'io/loop.json')).toBe(note);
    if (next) expect(denialNextStep(denials(n))).toMatch(next);
    else expect(denialNextStep(denials(n))).toBeUndefined();
  });
});
