import { describe, expect, it } from 'vitest';
import { buildCard } from '../../core/report/card.js';
import { isoWeek, modelFamily, rangeLabel, round2, shareSummary } from '../../core/report/share.js';
import { SENTINELS } from '../helpers/report-seed.js';
import { rawReport } from './report-fixture.js';

describe('chalk share, pure parts', () => {
  it.each([
    ['claude-opus-4-5-20251101', 'claude-opus-4-5'],
    ['claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['claude-haiku-4', 'claude-haiku-4'],
    ['opus', 'opus'],
    ['default', 'default'],
    ['arn:aws:bedrock:eu-west-1:123456789012:inference-profile/x', 'other'],
    ['claude-opus-4-5-secret-gateway', 'other'],
    ['claude-opus-4-5-2025110', 'other'],
  ])('modelFamily(%j) = %j', (model, want) => {
    expect(modelFamily(model)).toBe(want);
  });

  it.each([
    [0, 0],
    [1234.5, 1200],
    [0.01234, 0.012],
    [0.995, 0.99],
    [null, null],
    [Number.NaN, null],
  ])('round2(%j) = %j', (n, want) => {
    expect(round2(n)).toBe(want);
  });

  it.each([
    [0, '0'],
    [1, '1'],
    [3, '2-3'],
    [8, '8-15'],
    [15.9, '8-15'],
    [32, '32-63'],
  ])('rangeLabel(%j) = %j', (n, want) => {
    expect(rangeLabel(n)).toBe(want);
  });

  it.each([
    ['2026-12-01', '2026-W49'],
    ['2021-01-03', '2020-W53'],
    ['2024-12-30', '2025-W01'],
    ['2026-10-08', '2026-W41'],
  ])('isoWeek(%s) = %s', (day, want) => {
    expect(isoWeek(new Date(`${day}T12:00:00Z`))).toBe(want);
  });

  it('carries no stored text: a sentinel in every text field appears nowhere in the summary', () => {
    for (const [name, value] of Object.entries(SENTINELS)) {
      const card = buildCard(rawReport(value), {
        days: 30,
        repo: null,
        deciderThreshold: 0.9,
        fpRules: 'shadow',
        testReportSet: false,
      });
      const text = JSON.stringify(
        shareSummary({
          card,
          chalkVersion: '0.1.0',
          host: { platform: 'linux', arch: 'x64', cpus: 8, memoryBytes: 32 * 2 ** 30 },
          now: new Date('2026-11-28T12:34:56Z'),
        }),
      );
      expect(text, name).not.toContain(value);
      expect(text).not.toMatch(/2026-11-28|12:34|20250929/);
    }
  });

  it('rounds amounts to two figures and maps labels onto the fixed sets', () => {
    const card = buildCard(rawReport('x-unknown'), {
      days: 7,
      repo: null,
      deciderThreshold: 0.9,
      fpRules: 'shadow',
      testReportSet: false,
    });
    const s = shareSummary({
      card,
      chalkVersion: '0.1.0',
      host: { platform: 'linux', arch: 'x64', cpus: 8, memoryBytes: 32 * 2 ** 30 },
      now: new Date('2026-11-28T12:00:00Z'),
    });
    expect(s.week).toBe('2026-W48');
    expect(s.host).toEqual({ os: 'linux', arch: 'x86_64', cpus: '8-15', memory_gib: '32-63' });
    expect(s.totals.cost).toBe(13); // 12.5 -> 2 significant figures
    expect(s.rates.cost_per_checkpoint).toBe(1.3); // 12.5 / 10
    expect(s.by_kind).toEqual({
      continue: { calls: 20, cost: 8, avg_cost: 0.4, avg_seconds: 30 },
      other: { calls: 4, cost: 2, avg_cost: 0.5, avg_seconds: 10 },
    });
    expect(s.by_model).toEqual({
      other: { loops: 4, checkpoints: 2, cost: 2 },
      'claude-sonnet-4-5': { loops: 20, checkpoints: 8, cost: 11 },
    });
    expect(s.verdicts).toEqual({ repeat: 2, other: 1 });
    expect(s.decider.median_answer_ms).toBe(1230);
    expect(s.decider.models).toEqual({ hosted: 3 });
    // the one window answer: yes at 0.95 >= 0.9, detained, no later progress: a right stop.
    expect(s.decider.would_stop).toEqual({ correct: 1, false_stops: 0, waiting: 0 });
    // the ledger: detained, stops at the first repeat: saves 0.2 of 0.9 without progress.
    expect(s.ledger).toMatchObject({ detained_runs: 1, no_progress_cost: 0.9, would_have_saved: 0.2, false_stops: 0 });
  });
});
