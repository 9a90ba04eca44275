import { describe, expect, it } from 'vitest';
import { buildCard, type CardSettings } from '../../core/report/card.js';
import { hasDisplay, parseDays } from '../../core/report/dashboard.js';
import type { RawReport } from '../../core/report/data.js';
import { everyDay, renderPage, TABLE_ROWS } from '../../core/report/html.js';
import { rawReport } from './report-fixture.js';

const settings: CardSettings = { days: 30, repo: null, deciderThreshold: 0.9, fpRules: 'shadow', testReportSet: false };
/** The body of one section of the page. */
const section = (html: string, id: string) => html.split(`<section id="${id}">`)[1]?.split('</section>')[0] ?? '';

const quietDecider = (raw: RawReport, over: Record<string, number>, verdicts = {}): RawReport => ({
  ...raw,
  summary: { ...raw.summary, totals: { ...raw.summary.totals, ...over }, verdicts },
  decider: { ...raw.decider, asked: 0, answered: 0, answers: [], models: [], no_answer: [] },
});

describe('the report card page', () => {
  it('plots every day from the first to the last, days without spend as zero', () => {
    expect(
      everyDay([
        { day: '2026-02-27', cost: 1 },
        { day: '2026-03-02', cost: 2 },
      ]),
    ).toEqual([
      { day: '2026-02-27', cost: 1 },
      { day: '2026-02-28', cost: 0 },
      { day: '2026-03-01', cost: 0 },
      { day: '2026-03-02', cost: 2 },
    ]);
    expect(everyDay([])).toEqual([]);
  });

  it('shows at most TABLE_ROWS rows of a long table and counts the rest', () => {
    const raw = rawReport('x');
    const failing = Array.from({ length: 30 }, (_, i) => ({ repo: 'r', test: `test-${i}`, loops: 30 - i, tickets: 1 }));
    const html = renderPage(buildCard({ ...raw, summary: { ...raw.summary, failing_tests: failing } }, settings));
    const body = section(html, 'failing-tests');
    const table = body.split('<table>')[1] ?? '';
    expect(table.match(/<tr><td/g)).toHaveLength(TABLE_ROWS);
    expect(body).toContain('test-24');
    expect(body).not.toContain('test-25<');
    expect(body).toContain('and 5 more');
  });

  it('names the kinds of call as people say them', () => {
    const html = renderPage(buildCard(rawReport('x'), settings));
    expect(section(html, 'spend')).toContain('>first attempts<');
  });

  it.each([
    [{ failed_loops: 0 }, {}, 'no loop failed'],
    [{ failed_loops: 3 }, { repeat: 3 }, 'no failing loop was spinning or other'],
    [{ failed_loops: 3 }, { spinning: 1 }, 'is a decider configured?'],
  ])('says why the decider was asked nothing (%j, %j)', (totals, verdicts, why) => {
    const html = renderPage(buildCard(quietDecider(rawReport('x'), totals, verdicts), settings));
    expect(section(html, 'decider')).toContain(why);
  });

  it('says how many runs a confident stuck would have stopped in the window', () => {
    const html = renderPage(buildCard(rawReport('x'), settings));
    expect(section(html, 'decider')).toContain('would have stopped 1 shadow run(s) in this window: 1 rightly');
  });
});

describe('chalk dashboard options', () => {
  it.each([
    [undefined, 30],
    ['7', 7],
    ['3650', 3650],
  ])('--days %j is %j', (v, want) => {
    expect(parseDays(v)).toBe(want);
  });

  it.each(['0', '-1', '1.5', 'x', '3651', '007', ''])('--days %j is refused in one line', (v) => {
    expect(() => parseDays(v)).toThrow(/^--days takes a positive whole number up to 3650, not '.*'$/);
  });

  it.each([
    [{}, false],
    [{ DISPLAY: '' }, false],
    [{ DISPLAY: ':0' }, true],
    [{ WAYLAND_DISPLAY: 'wayland-0' }, true],
  ])('a display in %j: %j', (env, want) => {
    expect(hasDisplay(env)).toBe(want);
  });
});
