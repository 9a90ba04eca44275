import { STOPPING_VERDICTS } from '../fingerprint/verdict.js';
import type { Card } from './card.js';
import { escapeHtml as e, jsonForScript } from './escape.js';
import { columns, hbars, shareBar } from './svg.js';

/** Every section of the page, by id, in order (the browser and CLI tests look for each). */
export const SECTION_IDS = [
  'grade',
  'no-progress',
  'notes',
  'spend',
  'budget',
  'results',
  'checks',
  'ledger',
  'lessons',
  'decider',
  'failing-tests',
  'tickets',
] as const;

/** The kinds of call as people say them. */
const KIND_LABEL: Record<string, string> = {
  continue: 'first attempts',
  retry: 'retries',
  'fix-review': 'review fixes',
  review: 'reviews',
  'spec-check': 'spec checks',
  distill: 'distillation',
  plan: 'plans',
};

const usd = (n: number | null | undefined) => (n === null || n === undefined ? '–' : `$${Number(n).toFixed(2)}`);
const pct = (n: number | null) => (n === null ? '–' : `${Math.round(n * 100)}%`);
const rate = (a: number, b: number) => (b > 0 ? pct(a / b) : '–');

/**
 * The data the page carries for other readers: the queries' document with its
 * ledger's runs (grouped by their facts) and every decider answer (megabytes
 * over a year of a team's telemetry) replaced by what the card worked out of
 * them.
 */
export function embeddedData(c: Card): unknown {
  const { ledger: _groups, ...runs } = c.raw.runs;
  const { answers: _answers, ...decider } = c.raw.decider;
  return {
    ...c.raw,
    runs: { ...runs, ledger: c.ledger },
    decider: { ...decider, bands: c.bands, calibration: c.calibration },
  };
}

/** The most rows a table shows; the rest are counted under it (a year of tests is thousands). */
export const TABLE_ROWS = 25;

function table(head: string[], rows: (string | number)[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${e(empty)}</p>`;
  const th = head.map((h) => `<th>${e(h)}</th>`).join('');
  const cell = (c: string | number) =>
    typeof c === 'number' || /^[$–0-9]/.test(c) ? `<td>${e(c)}</td>` : `<td class="t">${e(c)}</td>`;
  const tr = rows
    .slice(0, TABLE_ROWS)
    .map((r) => `<tr>${r.map(cell).join('')}</tr>`)
    .join('');
  const more = rows.length > TABLE_ROWS ? `<p class="small">and ${rows.length - TABLE_ROWS} more</p>` : '';
  return `<table><thead><tr>${th}</tr></thead><tbody>${tr}</tbody></table>${more}`;
}

const section = (id: string, title: string, body: string) =>
  `<section id="${id}"><h2>${e(title)}</h2>${body}</section>`;

function grade(c: Card): string {
  const g = c.grade;
  const tiles = [
    ['cost per finished checkpoint', usd(g.costPerCheckpoint)],
    ['spend', usd(g.spend)],
    ['checkpoints', String(g.checkpoints)],
    ['requests opened', String(g.requestsOpened)],
    ['detentions', String(g.detentions)],
  ];
  return `<div class="tiles">${tiles.map(([k, v], i) => `<div class="tile${i === 0 ? ' big' : ''}"><div class="v">${e(v)}</div><div class="k">${e(k)}</div></div>`).join('')}</div><p class="small">All calls are counted in the cost per checkpoint: loops, checks, reviews and distillation.</p>`;
}

function noProgress(c: Card): string {
  const t = c.raw.summary.totals;
  if (c.noProgressShare === null) return '<p class="empty">No loop spend in this window.</p>';
  return `<p><strong>${pct(c.noProgressShare)}</strong> of loop spend (${usd(t.no_progress_cost)} of ${usd(t.loop_cost)}) went to loops that ticked no checkpoint.</p>${shareBar(
    c.noProgressShare,
    {
      title: 'share of loop spend without progress',
      left: `no progress ${usd(t.no_progress_cost)}`,
      right: `loop spend ${usd(t.loop_cost)}`,
    },
  )}`;
}

function notes(c: Card): string {
  if (c.notes.length === 0)
    return `<p class="empty">${(c.raw.summary.totals.loops ?? 0) < 20 ? 'Notes come once there are 20 loops in the window.' : 'Nothing to tune: every rule is within its threshold.'}</p>`;
  return `<ul class="notes">${c.notes.map((n) => `<li data-note="${e(n.id)}">${e(n.text)}</li>`).join('')}</ul>`;
}

/**
 * The days from the first with spend to the last, those without any as zero,
 * so the plot's time axis is even (the query returns only days with calls).
 */
export function everyDay(byDay: readonly { day: string; cost: number }[]): { day: string; cost: number }[] {
  if (byDay.length === 0) return [];
  const cost = new Map(byDay.map((d) => [d.day, Number(d.cost)]));
  const sorted = [...cost.keys()].sort();
  const out: { day: string; cost: number }[] = [];
  const DAY_MS = 86_400_000;
  const last = Date.parse(`${sorted[sorted.length - 1]}T00:00:00Z`);
  for (let t = Date.parse(`${sorted[0]}T00:00:00Z`); t <= last && out.length <= 400; t += DAY_MS) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push({ day, cost: cost.get(day) ?? 0 });
  }
  return out;
}

function spend(c: Card): string {
  const s = c.raw.summary;
  const byKind = hbars(
    s.by_kind.map((k) => ({ label: KIND_LABEL[k.kind] ?? k.kind, value: Number(k.cost) })),
    { title: 'spend by kind of call', format: usd },
  );
  const days = everyDay(s.by_day).map((d) => ({ label: d.day.slice(5), value: d.cost }));
  const byDay = columns(days, {
    title: 'spend by day',
    format: usd,
    labelEvery: Math.max(1, Math.ceil(days.length / 8)),
  });
  return `<h3>By kind of call</h3>${s.by_kind.length ? byKind : '<p class="empty">No calls.</p>'}${table(
    ['kind', 'calls', 'cost', 'avg cost', 'avg seconds'],
    s.by_kind.map((k) => [k.kind, k.calls, usd(k.cost), usd(k.cost / k.calls), Math.round(k.seconds / k.calls)]),
    'No calls in this window.',
  )}<h3>By day</h3>${days.length ? byDay : '<p class="empty">No spend.</p>'}`;
}

function budget(c: Card): string {
  const b = c.raw.summary.budget;
  const counts = Array.from({ length: 11 }, (_, i) => b.buckets.find((x) => x.bucket === i)?.loops ?? 0);
  const bars = counts.map((v, i) => ({ label: i === 10 ? 'cap' : `${i * 10}%`, value: v, waste: i >= 9 }));
  return `<p>Cap ${usd(b.cap)} (CHALK_BUDGET_USD of the latest loop); loop cost median ${usd(b.median)}, 90th percentile ${usd(b.p90)}, max ${usd(b.max)}; ${b.near_cap} loop(s) within 10% of the cap.</p>${columns(
    bars,
    {
      title: 'loops by cost as a share of the cap',
      format: (n) => String(Math.round(n)),
      marker: { at: 10, label: 'cap' },
    },
  )}`;
}

function results(c: Card): string {
  const s = c.raw.summary;
  const row = (name: string, r: { loops: number; retries: number; checkpoints: number; cost: number }) => [
    name,
    r.loops,
    r.checkpoints,
    usd(r.checkpoints > 0 ? r.cost / r.checkpoints : null),
    rate(r.retries, r.loops),
    usd(r.cost),
  ];
  const head = ['', 'loops', 'checkpoints', 'cost / checkpoint', 'retry share', 'cost'];
  return `<h3>By prompt set</h3>${table(
    head.map((h, i) => (i === 0 ? 'prompts (oldest first)' : h)),
    s.by_prompts.map((p) => row(p.prompts, p)),
    'No calls.',
  )}<h3>By model</h3>${hbars(
    s.by_model.filter((m) => m.checkpoints > 0).map((m) => ({ label: m.model, value: m.cost / m.checkpoints })),
    { title: 'cost per checkpoint by model', format: usd },
  )}${table(
    head.map((h, i) => (i === 0 ? 'model' : h)),
    s.by_model.map((m) => row(m.model, m)),
    'No calls.',
  )}`;
}

function checks(c: Card): string {
  const { review, spec_check: spec } = c.raw.summary.checks;
  return (
    table(
      ['check', 'ran', 'failed something', 'cost', 'what it led to'],
      [
        [
          'final review',
          review.ran,
          `${review.failed} (${rate(review.failed, review.ran)})`,
          usd(review.cost),
          `${review.fix_loops} fix loop(s), ${usd(review.fix_cost)}`,
        ],
        [
          'spec check',
          spec.ran,
          `${spec.failed} (${rate(spec.failed, spec.ran)})`,
          usd(spec.cost),
          `${spec.blocked_specs} spec(s) blocked before any loop`,
        ],
      ],
      'No checks ran.',
    ) +
    '<p class="small">A check that never fails anything costs without catching; one that fails often is saving loops on bad specs or shipping fixes.</p>'
  );
}

function ledger(c: Card): string {
  const l = c.ledger;
  const loops = c.raw.summary.totals.loops ?? 0;
  const head =
    l.judgeableRuns === 0
      ? `<p class="empty">No loop failed its rubric or passed without ticking a checkpoint under CHALK_FP_RULES=shadow in the last ${c.settings.days} days (${loops} loop(s)), so no verdict could stop a run; ${l.blockerOnlyRuns} run(s) had only blockers or agent errors, ${c.raw.runs.verdictless_runs} run(s) stalled with no verdict recorded (rules off).</p>`
      : `<p>Over ${l.judgeableRuns} judgeable shadow run(s), ${l.detainedRuns} detained: stopping at the first stopping verdict would have saved <strong>${usd(l.wouldHaveSaved)}</strong> of ${usd(l.noProgressCost)} spent without progress, with <strong>${l.falseStops}</strong> false stop(s) (runs that progressed after it). ${l.detainedImproving} detained run(s) were still improving. ${l.recommendOn ? '<strong>This clears the bar for CHALK_FP_RULES=on.</strong>' : 'Bar for turning the rules on: 20 detained runs, savings of a fifth, at most one false stop.'}</p>`;
  const by = STOPPING_VERDICTS.map((v) => ({ label: v, value: l.savedByVerdict[v] ?? 0 }));
  return `${head}${hbars(by, { title: 'would-have-saved by verdict', format: usd })}<p class="small">Runs under CHALK_FP_RULES=on (their stops were real, counted apart): ${l.onRuns}. Blocker-only runs: ${l.blockerOnlyRuns}. Stalled runs without verdicts: ${c.raw.runs.verdictless_runs}.</p>${table(
    ['verdict', 'loops'],
    Object.entries(c.raw.summary.verdicts).sort(([a], [b]) => (a < b ? -1 : 1)),
    'No loops.',
  )}`;
}

function lessons(c: Card): string {
  const { all, same_failure: same } = c.raw.runs.lessons_help;
  const bars = [
    { label: 'with a lesson', value: same.with > 0 ? same.with_passed / same.with : 0 },
    { label: 'without', value: same.without > 0 ? same.without_passed / same.without : 0, waste: true },
  ];
  return `<p>Retries of the same failure (${same.failures} failure(s) retried both ways): with a lesson ${same.with_passed}/${same.with} passed, without ${same.without_passed}/${same.without}.</p>${hbars(
    bars,
    { title: 'retry pass rate, same failure', format: pct },
  )}<p class="small">All retries: with a lesson ${all.with_passed}/${all.with} (${rate(all.with_passed, all.with)}), without ${all.without_passed}/${all.without} (${rate(all.without_passed, all.without)}).</p>`;
}

function decider(c: Card): string {
  const d = c.raw.decider;
  if (d.asked === 0 && c.calibration.length === 0) {
    const v = c.raw.summary.verdicts;
    const why =
      (c.raw.summary.totals.failed_loops ?? 0) === 0
        ? ': no loop failed, so there was nothing to judge stuck'
        : (v.spinning ?? 0) + (v.other ?? 0) === 0
          ? ': no failing loop was spinning or other (the verdicts it is asked about)'
          : (c.raw.summary.lessons.resolved ?? 0) === 0
            ? ': no resolved lesson to rerank yet'
            : ' (is a decider configured? see chalk decider status)';
    return `<p class="empty">The decider was asked nothing in this window${why}.</p>`;
  }
  const w = c.deciderWouldStop;
  const body = `<p>Asked ${d.asked}, answered ${d.answered}, acted on ${d.acted}; median answer time ${d.median_latency_ms === null ? '–' : `${Math.round(d.median_latency_ms)} ms`}. A confident "stuck" (at ${c.settings.deciderThreshold}) would have stopped ${w.correct + w.falseStops + w.waiting} shadow run(s) in this window: ${w.correct} rightly (detained without later progress), ${w.falseStops} false stop(s), ${w.waiting} not yet known.</p>${table(
    ['url', 'model', 'asked'],
    d.models.map((m) => [m.url || '–', m.model || '–', m.asked]),
    'No models.',
  )}<h3>No answer</h3>${table(
    ['reason', 'calls'],
    d.no_answer.map((x) => [x.error, x.calls]),
    'Every call got an answer.',
  )}<h3>Were confident answers right?</h3>${hbars(
    c.bands.map((b) => ({ label: b.band, value: b.answers > 0 ? b.right / b.answers : 0 })),
    { title: 'share of answers right by confidence band', format: pct },
  )}${table(
    ['confidence', 'answers', 'right'],
    c.bands.map((b) => [b.band, b.answers, b.right]),
    '',
  )}<h3>May it act yet?</h3>${table(
    [
      'url',
      'model',
      'judged',
      'correct',
      'false stops',
      'waiting',
      `passes at ${c.settings.deciderThreshold}`,
      'suggested threshold',
    ],
    c.calibration.map((g) => [
      g.url || '–',
      g.model || '–',
      `${g.judged}/20`,
      g.correct,
      g.falseStops,
      g.waiting,
      g.passes ? 'yes' : 'no',
      g.suggested === null ? '–' : g.suggested.toFixed(2),
    ]),
    'No confident shadow answers recorded yet (all history).',
  )}`;
  return body;
}

function failingTests(c: Card): string {
  const s = c.raw.summary;
  const plot =
    s.failing_tests.length === 0
      ? ''
      : hbars(
          s.failing_tests.slice(0, 10).map((f) => ({ label: f.test, value: f.loops, waste: true })),
          { title: 'failing loops by test', format: String },
        );
  return `${plot}${table(
    ['repository', 'test', 'failing loops', 'tickets'],
    s.failing_tests.map((f) => [f.repo, f.test, f.loops, f.tickets]),
    'No failing test was named in this window.',
  )}<h3>Flaky (failed, then passed on the same tree)</h3>${table(
    ['repository', 'test', 'loops', 'tickets'],
    s.flaky_tests.map((f) => [f.repo, f.test, f.loops, f.tickets]),
    'No test was found flaky in this window.',
  )}`;
}

function tickets(c: Card): string {
  return table(
    ['repository', 'ticket', 'state', 'loops', 'cost', 'last active (UTC)'],
    c.tickets.map((t) => [t.repo, t.ticket, t.state, t.loops, usd(t.cost), t.at.replace('T', ' ').slice(0, 16)]),
    'No tickets in this window.',
  );
}

const CSS = `
:root{--bg:#f1eee3;--fg:#1c342d;--muted:#4d6159;--line:#c9c4b3;--bar:#2f5a4c;--accent:#b8962a;--waste:#b03a2e;--ok:#2e7d4f}
@media (prefers-color-scheme:dark){:root{--bg:#1c342d;--fg:#f1eee3;--muted:#b9c4bc;--line:#3d5a50;--bar:#f1eee3;--accent:#f0d878;--waste:#e0796b;--ok:#8fd19e}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 ui-monospace,"Courier New",Courier,monospace}
main{max-width:58rem;margin:0 auto;padding:1.5rem 1rem 4rem}
h1{font-size:1.6rem;margin:.2rem 0;border-bottom:3px solid var(--accent)}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1.2rem 0 .4rem;color:var(--muted)}
.small,.empty{color:var(--muted);font-size:.9rem}
.tiles{display:flex;flex-wrap:wrap;gap:.6rem}
.tile{border:1px solid var(--line);padding:.5rem .8rem;min-width:9rem}
.tile.big{border:2px solid var(--accent)}
.tile .v{font-size:1.4rem;font-weight:bold}.tile.big .v{font-size:2rem}
.tile .k{color:var(--muted);font-size:.85rem}
table{border-collapse:collapse;width:100%;margin:.4rem 0;font-size:.9rem}
th,td{text-align:left;padding:.2rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td{white-space:nowrap}td.t{white-space:normal;overflow-wrap:anywhere}th{white-space:nowrap}
th{color:var(--muted);font-weight:normal}
.notes li{margin:.3rem 0}
svg.plot{display:block;margin:.4rem 0;max-width:880px}
svg .bar{fill:var(--bar)}svg .bar.waste{fill:var(--waste)}
svg .lbl,svg .val{fill:var(--fg);font:12px ui-monospace,"Courier New",monospace}
svg .axis{stroke:var(--line)}svg .marker{stroke:var(--accent);stroke-dasharray:4 3}
@media print{:root{--bg:#fff;--fg:#000;--muted:#333;--line:#999;--bar:#555;--accent:#000;--waste:#000}
body{font-size:11pt}main{max-width:none;padding:0}section{break-inside:avoid}svg .bar.waste{fill:#999}}
`;

/** The page: one self-contained HTML document (inline CSS and SVG, no script that runs, no external fetch). */
export function renderPage(c: Card): string {
  const scope = c.settings.repo === null ? 'all repositories' : c.settings.repo;
  const sections: Record<(typeof SECTION_IDS)[number], [string, string]> = {
    grade: ['The grade', grade(c)],
    'no-progress': ['Spend that made no progress', noProgress(c)],
    notes: ['Notes for next term', notes(c)],
    spend: ['Where the money went', spend(c)],
    budget: ['Loop cost against CHALK_BUDGET_USD', budget(c)],
    results: ['Results by prompt set and by model', results(c)],
    checks: ['Do the spec check and the review earn their cost?', checks(c)],
    ledger: ['Would stopping early have paid?', ledger(c)],
    lessons: ['Did lessons help?', lessons(c)],
    decider: ['Is the decider worth asking?', decider(c)],
    'failing-tests': ['Which tests keep failing?', failingTests(c)],
    tickets: ['Recent tickets', tickets(c)],
  };
  const body = SECTION_IDS.map((id) => section(id, ...sections[id])).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Chalk report card: last ${c.settings.days} days</title>
<style>${CSS}</style></head>
<body><main>
<h1>Chalk report card</h1>
<p class="small">The last ${c.settings.days} days, ${e(scope)}. Built from the telemetry on this machine; nothing was sent.</p>
${body}
</main>
<script type="application/json" id="chalk-data">${jsonForScript(embeddedData(c))}</script>
</body></html>
`;
}
