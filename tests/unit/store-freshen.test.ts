import { describe, expect, it } from 'vitest';
import { staleTables } from '../../core/store/freshen.js';

describe('staleTables (which of the card tables the planner needs analyzed)', () => {
  const est = (runs: number | null, loops: number | null, pending: number | null = 0) => [
    { table: 'runs', reltuples: runs },
    { table: 'report_loops', reltuples: loops },
    { table: 'report_pending', reltuples: pending },
  ];
  it('names the tables never analyzed, and leaves out the ones not there', () => {
    expect(staleTables(est(1000, -1), 1000)).toEqual(['report_loops']);
    expect(staleTables(est(1000, 900, null), 1000)).toEqual([]);
    expect(staleTables(est(1000, null, -1), 1000)).toEqual(['report_pending']);
  });
  it('names every table once runs grew past a tenth and 50 rows of its estimate', () => {
    expect(staleTables(est(1000, 5), 1150)).toEqual([]);
    expect(staleTables(est(1000, 5), 1151)).toEqual(['runs', 'report_loops', 'report_pending']);
    expect(staleTables(est(0, 0), 50)).toEqual([]);
    expect(staleTables(est(0, 0), 51)).toEqual(['runs', 'report_loops', 'report_pending']);
    expect(staleTables(est(-1, 0), 0)).toEqual(['runs']);
  });
});
