import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoName } from '../../core/repo/git.js';
import { SECTION_IDS } from '../../core/report/html.js';
import { PgStore } from '../../core/store/index.js';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';
import { HOSTILE, SENTINELS, seedTelemetry } from '../helpers/report-seed.js';
import { BACKENDS } from './store/backends.js';

/** The JSON the page embeds for other readers, decoded. */
const embedded = (html: string) => {
  const m = /<script type="application\/json" id="chalk-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m?.[1]) throw new Error('no data script');
  return JSON.parse(m[1]) as unknown;
};

describe.each(BACKENDS)('chalk dashboard and chalk share through the CLI on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  const cwd = tempDir('chalk-dash-');
  const env = () => db.env as Record<string, string | undefined>;
  let repo = '';
  const bin = tempDir('chalk-open-');

  beforeAll(async () => {
    db = await backend.fresh();
    const store = await PgStore.open(db.target, 120_000);
    try {
      await seedTelemetry(store);
      await seedTelemetry(store, { hostile: true });
      repo = scratchRepo('dash-here');
      await store.calls.record({
        ...{ repo: await repoName(repo), ticket: 'HERE-1', branch: 'chalk/HERE-1', loop: 1, kind: 'continue' },
        ...{ agentStatus: 'ok', rubricExit: 0, progressed: true, model: 'opus', prompts: 'abcd1234' },
        ...{ costUsd: 0.5, budgetUsd: 1, durationS: 10, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0 },
        ...{ cacheWriteTokens: 0, turns: 1, denials: 0, lessons: 0, runId: 'HERE-1-1' },
      });
    } finally {
      await store.close();
    }
  }, 240_000);
  afterAll(async () => {
    await db?.dispose();
    for (const dir of [cwd, bin, repo && join(repo, '..')]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes one self-contained page with every section and its plots, and prints its path', () => {
    const out = join(cwd, 'card.html');
    const r = chalk(['dashboard', '--all', '--days', '7', '--no-open', '--output', out], { cwd, env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`report card for the last 7 days: ${out}\n`);
    const html = readFileSync(out, 'utf8');
    for (const id of SECTION_IDS) expect(html).toContain(`<section id="${id}">`);
    expect(html.match(/<svg class="plot"/g)?.length ?? 0).toBeGreaterThanOrEqual(6);
    expect(html).toMatch(/<rect class="bar[^"]*" x="[\d.]+" y="[\d.]+" width="[1-9]/);
    // Nothing to fetch: no src, href, url() or @import anywhere.
    expect(html).not.toMatch(/<[^>]*\s(src|href|action)=|url\(|@import/i);
    expect(html).toContain(SENTINELS.ticket);
    expect(html).toContain(`${SENTINELS.test}_flaky`);
    expect(html).toContain('prefers-color-scheme:dark');
    expect(html).toContain('@media print');
  });

  it('escapes stored text: a hostile value in every text column closes no script and adds no markup', () => {
    const out = join(cwd, 'hostile.html');
    const r = chalk(['dashboard', '--all', '--no-open', '-o', out], { cwd, env: env() });
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('<img');
    expect(/<script[^>]*>([\s\S]*?)<\/script>/.exec(html)?.[1]).not.toMatch(/[<>&\u2028\u2029]/);
    expect(html.match(/<\/script>/g)?.length).toBe(1);
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x');
    expect(JSON.stringify(embedded(html))).toContain(JSON.stringify(HOSTILE).slice(1, -1));
  });

  it('--repo shows one repository; inside none, --days and --repo with --all are refused in one line', () => {
    const out = join(cwd, 'one.html');
    const r = chalk(['dashboard', '--repo', SENTINELS.repo2, '--no-open', '-o', out], { cwd, env: env() });
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('SNTL-8');
    expect(html).not.toContain(SENTINELS.ticket);
    for (const bad of [
      ['--days', 'x'],
      ['--days', '0'],
      ['--all', '--repo', 'a'],
    ]) {
      const b = chalk(['dashboard', '--no-open', ...bad], { cwd, env: env() });
      expect(b.code).not.toBe(0);
      expect(b.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('inside a repository shows that repository by default', () => {
    const out = join(cwd, 'here.html');
    const r = chalk(['dashboard', '--no-open', '-o', out], { cwd: repo, env: env() });
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('HERE-1');
    expect(html).not.toContain(SENTINELS.ticket);
  });

  it('opens the page with xdg-open only when there is a display, and not with --no-open', async () => {
    const log = join(bin, 'opened');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${log}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const path = `${bin}:${process.env.PATH}`;
    const run = (name: string, extra: Record<string, string | undefined>, args: string[] = []) =>
      chalk(['dashboard', '--all', '-o', join(bin, name), ...args], {
        cwd,
        env: { ...env(), PATH: path, DISPLAY: undefined, WAYLAND_DISPLAY: undefined, ...extra },
      });
    expect(run('none.html', {}).code).toBe(0);
    expect(run('told.html', { DISPLAY: ':99' }, ['--no-open']).code).toBe(0);
    expect(run('wayland.html', { WAYLAND_DISPLAY: 'wayland-0' }).code).toBe(0);
    const deadline = Date.now() + 20_000;
    // The shell creates the file before printf writes to it: wait for a whole line.
    const line = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
    while (!line().endsWith('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(log, 'utf8')).toBe(`${join(bin, 'wayland.html')}\n`);
  });

  it('chalk share prints an allow-listed summary with no seeded value in it, and sends nothing', () => {
    const out = join(cwd, 'share.json');
    const r = chalk(['share', '--output', out], { cwd, env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Nothing has been sent');
    expect(readFileSync(out, 'utf8')).toBe(r.stdout);
    const summary = JSON.parse(r.stdout);
    expect(summary.totals.calls).toBeGreaterThanOrEqual(14);
    expect(summary.by_model['claude-opus-4-5'].loops).toBeGreaterThan(0);
    expect(summary.by_model.other).toBeDefined();
    const text = r.stdout.toLowerCase();
    for (const [name, value] of Object.entries(SENTINELS)) {
      expect(text, name).not.toContain(value.toLowerCase());
    }
    for (const piece of ['sentinel', 'sntl', '123456789012', '20991231', '5eed1e55', 'example', 'script', '<', '@']) {
      expect(text).not.toContain(piece);
    }
    // No timestamp: no date and no time of day.
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{2}:\d{2}/);
    const j = chalk(['share', '--json'], { cwd, env: env() });
    expect(j.code).toBe(0);
    expect(j.stderr).toBe('');
    expect(JSON.parse(j.stdout).schema).toBe(1);
  });
});
