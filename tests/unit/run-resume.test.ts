import { describe, expect, it } from 'vitest';
import type { RunTotals } from '../../core/ports/store.js';
import {
  checkRecord,
  parseRecord,
  type RunRecord,
  resumeFrom,
  resumeLine,
  runRecord,
} from '../../core/run/resume/resume.js';

const counts = { loop: 2, failures: 0, guarded: 0, failedReviews: 0 };
const record = (o: Partial<RunRecord> = {}): RunRecord => ({
  ...runRecord({
    runId: 'SHOP-7-1700000000',
    startedAt: new Date('2026-12-01T10:00:00Z'),
    now: new Date('2026-12-01T10:05:00Z'),
    counts,
  }),
  ...o,
});
const totals = (o: Partial<RunTotals> = {}): RunTotals => ({
  spentUsd: 0.5,
  lastLoop: 2,
  lastLoopProgressed: true,
  ...o,
});

describe('the run record', () => {
  it('round-trips through its text', () => {
    const r = record();
    expect(parseRecord(JSON.stringify(r))).toEqual(r);
    expect(r).toMatchObject({ v: 1, ended: null, loops: 2, startedAt: '2026-12-01T10:00:00.000Z' });
  });

  it('is null when missing, not JSON, of another version or with a bad field (the run starts fresh)', () => {
    expect(parseRecord(null)).toBeNull();
    expect(parseRecord('{not json')).toBeNull();
    expect(parseRecord(JSON.stringify({ ...record(), v: 2 }))).toBeNull();
    expect(parseRecord(JSON.stringify({ ...record(), loops: -1 }))).toBeNull();
    expect(parseRecord(JSON.stringify({ ...record(), loops: 1.5 }))).toBeNull();
    expect(parseRecord(JSON.stringify({ ...record(), ended: '' }))).toBeNull();
    expect(parseRecord(JSON.stringify({ ...record(), runId: '' }))).toBeNull();
  });
});

describe('whether a run is resumed', () => {
  it('starts fresh with no record, or after a run that ended (graduated, detained, spec-blocked)', () => {
    expect(checkRecord(null)).toEqual({ kind: 'fresh' });
    for (const ended of ['graduated', 'detained', 'spec-blocked']) {
      expect(checkRecord(record({ ended }))).toEqual({ kind: 'fresh' });
    }
  });

  it('continues an unended run: same run id, its counts and the store spend', () => {
    const check = checkRecord(record({ failures: 1, guarded: 1, failedReviews: 1 }));
    if (check.kind !== 'unended') throw new Error(check.kind);
    const r = resumeFrom(check.record, totals({ spentUsd: 1.234, lastLoopProgressed: false }));
    expect(r).toEqual({
      runId: 'SHOP-7-1700000000',
      spentUsd: 1.234,
      counts: { loop: 2, failures: 1, guarded: 1, failedReviews: 1 },
    });
    expect(resumeLine(r as NonNullable<typeof r>)).toBe('resuming after loop 2 ($1.23 spent)');
  });

  it('starts fresh when the killed run finished no loop', () => {
    expect(resumeFrom(record({ loops: 0 }), totals({ lastLoop: 0, lastLoopProgressed: null }))).toBeNull();
  });

  it('counts a loop whose row was written when the record was not (killed between the two)', () => {
    // Progressed: the failure count resets.
    expect(
      resumeFrom(record({ loops: 1, failures: 1 }), totals({ lastLoop: 2, lastLoopProgressed: true })),
    ).toMatchObject({ counts: { loop: 2, failures: 0 } });
    // No progress: one more failure.
    expect(
      resumeFrom(record({ loops: 1, failures: 1 }), totals({ lastLoop: 2, lastLoopProgressed: false })),
    ).toMatchObject({ counts: { loop: 2, failures: 2 } });
    // A record written with no row at all (the store lost nothing, the record is the count).
    expect(resumeFrom(record({ loops: 2 }), totals({ lastLoop: 0, lastLoopProgressed: null }))).toMatchObject({
      counts: { loop: 2, failures: 0 },
    });
  });

  it('shows the spend with two decimals', () => {
    const line = (spentUsd: number) =>
      resumeLine({ runId: 'x', spentUsd, counts: { loop: 3, failures: 0, guarded: 0, failedReviews: 0 } });
    expect(line(0)).toBe('resuming after loop 3 ($0.00 spent)');
    expect(line(0.005)).toBe('resuming after loop 3 ($0.01 spent)');
    expect(line(12.3)).toBe('resuming after loop 3 ($12.30 spent)');
  });
});
