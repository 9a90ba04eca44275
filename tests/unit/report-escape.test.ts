import { describe, expect, it } from 'vitest';
import { buildCard } from '../../core/report/card.js';
import type { RawReport } from '../../core/report/data.js';
import { escapeHtml, jsonForScript } from '../../core/report/escape.js';
import { embeddedData, renderPage, SECTION_IDS } from '../../core/report/html.js';
import { HOSTILE } from '../helpers/report-seed.js';
import { rawReport } from './report-fixture.js';

describe('escaping for the report card', () => {
  it.each([
    ['</script><b>x', '&lt;/script&gt;&lt;b&gt;x'],
    [`a & "b" 'c'`, 'a &amp; &quot;b&quot; &#39;c&#39;'],
    [null, ''],
  ])('escapeHtml(%j) = %j', (input, want) => {
    expect(escapeHtml(input)).toBe(want);
  });

  it('jsonForScript escapes < > & and the line separators, and still parses to the same value', () => {
    const value = { t: '</script><!-- & \u2028\u2029' };
    const s = jsonForScript(value);
    expect(s).toBe('{"t":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029"}');
    expect(JSON.parse(s)).toEqual(value);
  });

  it('a page built from hostile text everywhere holds no markup from it', () => {
    const raw: RawReport = rawReport(HOSTILE);
    const card = buildCard(raw, {
      days: 30,
      repo: HOSTILE,
      deciderThreshold: 0.9,
      fpRules: 'shadow',
      testReportSet: false,
    });
    const html = renderPage(card);
    for (const id of SECTION_IDS) expect(html).toContain(`<section id="${id}">`);
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('<img');
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;');
    const data = /<script type="application\/json" id="chalk-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(data).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(data)).toEqual(JSON.parse(JSON.stringify(embeddedData(card))));
  });

  it('the page carries what the card worked out, not every run and answer behind it', () => {
    const raw: RawReport = rawReport('x');
    const card = buildCard(raw, {
      days: 30,
      repo: null,
      deciderThreshold: 0.9,
      fpRules: 'shadow',
      testReportSet: false,
    });
    const data = embeddedData(card) as { runs: Record<string, unknown>; decider: Record<string, unknown> };
    expect(data.runs.ledger).not.toEqual(raw.runs.ledger);
    expect(data.decider.answers).toBeUndefined();
    expect(data.runs.ledger).toEqual(card.ledger);
    expect(data.decider.calibration).toEqual(card.calibration);
    expect(raw.runs.ledger.length + raw.decider.answers.length).toBeGreaterThan(0);
  });
});
