import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { denialNextStep, denialNote, deniedTools, MANY_DENIALS } from '../../core/agent/denials.js';
import { withMetered } from '../../core/agent/metered.js';
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

  it('a call with no result of its own is counted at its cap, with how a limit or the sandbox ended it', () => {
    const cap = { capUsd: 1.5 };
    expect(parseResult('continue', { ...run('', 124), timedOut: true, timeoutS: 60 }, 'sonnet', cap)).toMatchObject({
      status: 'timed_out',
      ending: 'timed out after 60 s (CHALK_AGENT_TIMEOUT)',
      costUsd: 1.5,
      costUnknown: true,
      answer: 'none',
    });
    expect(
      parseResult('continue', { ...run('', 137), killedBy: 'the sandbox ran out of memory' }, '', cap),
    ).toMatchObject({ status: 'killed', ending: 'was killed: the sandbox ran out of memory', costUsd: 1.5 });
    expect(parseResult('continue', { ...run('partial {', 143), outputCapped: true }, '', cap)).toMatchObject({
      status: 'output_capped',
      costUsd: 1.5,
    });
    // Killed by its own agent before it printed: not free.
    expect(parseResult('continue', run('', 137), '', cap)).toMatchObject({ status: 'error', costUsd: 1.5 });
    // A CLI that never started spent nothing.
    const never = parseResult('continue', run('bash: claude: command not found', 127), '', cap);
    expect(never).toMatchObject({ costUsd: 0 });
    expect(never.costUnknown).toBeUndefined();
    // A result of its own decides, whatever the exit.
    const own = JSON.stringify({ ...ok, total_cost_usd: 0.25 });
    expect(parseResult('continue', { ...run(own, 0), timedOut: true, timeoutS: 60 }, '', cap)).toMatchObject({
      costUsd: 0.25,
      status: 'ok',
    });
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

describe('withMetered: the gateway counted the call', () => {
  const metered = {
    costUsd: 0.25,
    inputTokens: 100,
    outputTokens: 20,
    cacheReadTokens: 3,
    cacheCreationTokens: 4,
    model: 'claude-sonnet-4-5',
    requests: 2,
    unmetered: 0,
    unpriced: [],
    refusedOverCap: 0,
  };
  const finished = parseResult('continue', { exitCode: 0, stdout: '', stderr: '', durationMs: 5 }, 'm', { capUsd: 1 });

  it("takes the gateway's cost, tokens and model over what the CLI printed", () => {
    const cli = parseResult(
      'continue',
      {
        exitCode: 0,
        stdout: JSON.stringify({
          type: 'result',
          subtype: 'success',
          is_error: false,
          total_cost_usd: 0,
          num_turns: 3,
        }),
        stderr: '',
        durationMs: 5,
      },
      'm',
      { capUsd: 1 },
    );
    const r = withMetered(cli, metered);
    expect(r.costUsd).toBe(0.25);
    expect(r.costUnknown).toBeUndefined();
    expect(r.usage).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 3,
      cacheCreationTokens: 4,
      turns: 3,
    });
    expect(r.model).toBe('claude-sonnet-4-5');
  });

  it('keeps a call with no result of its own at its cap, or at the count when that is more', () => {
    expect(finished.costUnknown).toBe(true);
    expect(withMetered(finished, metered).costUsd).toBe(1);
    expect(withMetered(finished, { ...metered, costUsd: 1.4 }).costUsd).toBe(1.4);
  });

  it('says a call the gateway stopped at its cap ended on the budget', () => {
    expect(withMetered(finished, { ...metered, refusedOverCap: 1 }).status).toBe('error_max_budget_usd');
  });
});
