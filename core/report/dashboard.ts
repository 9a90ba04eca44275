import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Pool } from 'pg';
import { UserError } from '../errors.js';
import { stateDir } from '../layout.js';
import { freshenCardStats } from '../store/index.js';
import { buildCard, type Card, type CardSettings } from './card.js';
import { loadReport } from './data.js';
import { renderPage } from './html.js';

/** `--days`: a positive whole number of days (at most ten years). */
export function parseDays(value: string | undefined, fallback = 30): number {
  if (value === undefined) return fallback;
  if (!/^[1-9][0-9]{0,3}$/.test(value) || Number(value) > 3650)
    throw new UserError(`--days takes a positive whole number up to 3650, not '${value}'`);
  return Number(value);
}

/**
 * The card for a window, read from the store's pool; a failed query is one line naming what
 * could not be read (`for` says for what: the dashboard or the summary). `parallel`: the pool is a
 * Postgres server's, whose queries may run at once (loadReport).
 */
export async function readCard(
  pool: Pool,
  settings: CardSettings,
  opts: { for: string; parallel?: boolean },
): Promise<Card> {
  let raw: Awaited<ReturnType<typeof loadReport>>;
  try {
    // The planner's statistics first: the embedded store has no autovacuum (core/store/freshen.ts).
    await freshenCardStats(pool);
    raw = await loadReport(pool, { days: settings.days, repo: settings.repo }, { parallel: opts.parallel ?? false });
  } catch (err) {
    const first = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new UserError(`could not read telemetry for the ${opts.for}: ${first}`);
  }
  return buildCard(raw, settings);
}

/** Where the page goes unless --output says: `<state>/chalk/dashboard.html`. */
export const defaultDashboardPath = (env: NodeJS.ProcessEnv = process.env) => join(stateDir(env), 'dashboard.html');

/** Writes the page and returns its path. */
export function writePage(card: Card, path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, renderPage(card), { mode: 0o600 });
  return path;
}

/** Whether there is a display to open the page on (X11 or Wayland). */
export const hasDisplay = (env: NodeJS.ProcessEnv = process.env) => Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);

/** Opens the file with xdg-open, detached, never waiting for it; false when there is no display. */
export function openPage(path: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!hasDisplay(env)) return false;
  const child = spawn('xdg-open', [path], { detached: true, stdio: 'ignore', env });
  child.on('error', () => {});
  child.unref();
  return true;
}
