import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../core/process/run.js';
import { SECTION_IDS } from '../../core/report/html.js';
import { PgStore } from '../../core/store/index.js';
import { BACKENDS, CI, ROOT } from './store/backends.js';

/**
 * The report card as a person sees it: telemetry seeded on each store, the page written by
 * the real `chalk dashboard`, opened from file:// in Debian's headless Chromium (driven by
 * playwright-core; no browser is ever downloaded). Every section is there, every plot has
 * drawn shapes, nothing logs an error and nothing at all is fetched, in light and dark; printed,
 * it is dark text on a light page.
 * Screenshots go to tests/artifacts/ (ignored by git). Skipped only outside CI without chromium.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (CI && !HAVE_CHROMIUM) throw new Error(`${CHROMIUM} is missing: .ci/setup.d/15-chromium.sh installs it`);
const ARTIFACTS = join(ROOT, 'tests', 'artifacts');

/** The sections the issue asks for, by the id the page gives each. */
const SECTIONS = [
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
];
/** Sections that show their numbers as a plot (the issue: "plots, not only tables"). */
const PLOTTED = ['no-progress', 'spend', 'budget', 'results', 'ledger', 'lessons', 'decider'];
/** 100 tickets over the past year, with events, lessons and decider answers. */
const SEED_RUNS = 5_000;

const seedSql = () =>
  readFileSync(join(ROOT, 'tests', 'fixtures', 'telemetry-seed.sql'), 'utf8').replaceAll('{{RUNS}}', String(SEED_RUNS));

interface Seen {
  requests: string[];
  errors: string[];
  background: string;
  printed: { background: string; color: string };
  sections: string[];
  plots: { section: string; shapes: number; drawn: number; nan: boolean }[];
}

/**
 * Runs in the page (a string: the project's TypeScript has no DOM types): the body's background,
 * the sections by id, and per plot how many shapes it has and how many are drawn: a line with a
 * length, anything else with an area.
 */
const IN_PAGE = `(() => {
  const shapes = 'rect,line,path,circle,polyline,polygon';
  return {
    background: getComputedStyle(document.body).backgroundColor,
    sections: [...document.querySelectorAll('section[id]')].map((s) => s.id),
    plots: [...document.querySelectorAll('section[id] svg')].map((svg) => {
      const all = [...svg.querySelectorAll(shapes)];
      const drawn = all.filter((el) => {
        const b = el.getBBox();
        return el.tagName === 'line' ? b.width > 0 || b.height > 0 : b.width > 0 && b.height > 0;
      });
      return {
        section: svg.closest('section')?.id ?? '',
        shapes: all.length,
        drawn: drawn.length,
        nan: /NaN|undefined|Infinity/.test(svg.outerHTML),
      };
    }),
  };
})()`;

/** Relative luminance (0 black .. 1 white) of a CSS rgb()/rgba() colour. */
function lightness(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? []).map(Number).map((c) => c / 255);
  if (r === undefined || g === undefined || b === undefined) throw new Error(`not an rgb colour: ${css}`);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Opens the page in a fresh profile with the given scheme; what it asked for, logged and drew. */
async function look(file: string, scheme: 'light' | 'dark', shot: string): Promise<Seen> {
  const url = pathToFileURL(file).href;
  const profile = mkdtempSync(join(tmpdir(), 'chalk-chromium-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      colorScheme: scheme,
      viewport: { width: 1100, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const requests: string[] = [];
    const errors: string[] = [];
    context.on('request', (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(url, { waitUntil: 'load' });
    const seen = await page.evaluate<Omit<Seen, 'requests' | 'errors' | 'printed'>>(IN_PAGE);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });
    process.stdout.write(`dashboard screenshot: ${shot}\n`);
    // Printed, in either scheme: dark text on a light page.
    await page.emulateMedia({ media: 'print', colorScheme: scheme });
    const printed = await page.evaluate<{ background: string; color: string }>(
      `(() => { const s = getComputedStyle(document.body); return { background: s.backgroundColor, color: s.color }; })()`,
    );
    return { requests, errors, ...seen, printed };
  } finally {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

describe.skipIf(!HAVE_CHROMIUM).each(BACKENDS)('the report card in Chromium, from the $name store', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    db = await backend.fresh();
    const store = await PgStore.open(db.target, 120_000);
    try {
      await store.pool.query(seedSql());
    } finally {
      await store.close();
    }
    dir = mkdtempSync(join(tmpdir(), 'chalk-dashboard-browser-'));
    file = join(dir, 'card.html');
    const r = await run(
      process.execPath,
      [join(ROOT, 'dist', 'cli', 'main.js'), 'dashboard', '--all', '--days', '366', '--no-open', '--output', file],
      { cwd: dir, env: { ...db.env, NO_COLOR: '1' } },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(file);
  }, 240_000);
  afterAll(async () => {
    await db?.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the page names every section the issue asks for', () => {
    expect([...SECTION_IDS]).toEqual(SECTIONS);
  });

  it('light and dark: every section, every plot drawn, no console error, no request but the page itself', async () => {
    const seen: Partial<Record<'light' | 'dark', Seen>> = {};
    for (const scheme of ['light', 'dark'] as const) {
      const s = await look(file, scheme, join(ARTIFACTS, `dashboard-${backend.name}-${scheme}.png`));
      seen[scheme] = s;
      expect(s.requests, scheme).toEqual([]);
      expect(s.errors, scheme).toEqual([]);
      expect(s.sections, scheme).toEqual(SECTIONS);
      for (const id of PLOTTED) expect(s.plots.filter((p) => p.section === id).length, id).toBeGreaterThan(0);
      expect(lightness(s.printed.background), `${scheme}, printed`).toBeGreaterThan(lightness(s.printed.color) + 0.5);
      for (const p of s.plots) {
        expect(p.drawn, `${scheme}: a plot in #${p.section} drew nothing`).toBeGreaterThan(0);
        expect(p.nan, `${scheme}: a plot in #${p.section} has NaN/undefined in it`).toBe(false);
      }
    }
    // The page follows the scheme: the two backgrounds differ.
    expect(seen.light?.background).toMatch(/^rgb/);
    expect(seen.dark?.background).toMatch(/^rgb/);
    expect(seen.dark?.background).not.toBe(seen.light?.background);
  }, 180_000);
});
