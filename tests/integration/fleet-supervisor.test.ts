import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { maxParallel } from '../../core/fleet/parallel.js';
import { readStatus } from '../../core/fleet/status.js';
import { type Fleet, type Launched, newMemory, snapshot, supervise } from '../../core/fleet/supervisor.js';
import { fleetPaths, runPaths } from '../../core/layout.js';
import type { Store, TicketSummary } from '../../core/ports/store.js';
import { alive } from '../../core/process/pid.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The supervisor's loop in-process with stand-in runs (real processes that sleep, their pid
 * files written as launchRun writes them) and a store whose answers the test sets.
 */
function fleetWith(o: { tickets: string[]; slots: number; ceiling?: number; summaries: () => TicketSummary[] }) {
  const env = { XDG_STATE_HOME: tempDir('chalk-fleet-sup-') };
  const root = tempDir('chalk-fleet-sup-root-');
  const store = { tickets: { summaries: async () => o.summaries() } } as unknown as Store;
  const fleet: Fleet = {
    repo: 'shop',
    root,
    epic: 'SHOP-1',
    base: 'main',
    plan: { workstreams: o.tickets.map((t) => ({ ticket: t, title: t, checkpoints: ['c'] })) },
    parallel: maxParallel(String(o.slots), null),
    limits: { budgetUsd: 1, maxLoops: 1, specCheck: false, review: false, reviewRounds: 0 },
    ceiling: o.ceiling ?? null,
    store,
    env,
  };
  const live = new Set<number>();
  let most = 0;
  const order: string[] = [];
  /** A run that sleeps `ms` (or until SIGTERM) and exits 0. */
  const launcher =
    (ms: number) =>
    ({ ticket }: { ticket: string }): Launched => {
      const child = spawn(process.execPath, [
        '-e',
        `setTimeout(() => {}, ${ms}); process.on('SIGTERM', () => process.exit(143));`,
      ]);
      const pid = child.pid as number;
      const paths = runPaths('shop', ticket, env);
      mkdirSync(paths.dir, { recursive: true });
      writeFileSync(paths.pid, `${pid}\n`);
      live.add(pid);
      most = Math.max(most, live.size);
      order.push(ticket);
      return {
        pid,
        onExit: (cb) =>
          child.once('exit', (code) => {
            live.delete(pid);
            cb(code ?? 143);
          }),
      };
    };
  return { fleet, launcher, order, most: () => most, live };
}

describe('the supervisor', { timeout: 60_000 }, () => {
  it('keeps the slots full: never more than two at once, the third when one ends, then done', async () => {
    const f = fleetWith({ tickets: ['SHOP-2', 'SHOP-3', 'SHOP-4'], slots: 2, summaries: () => [] });
    const lines: string[] = [];
    const final = await supervise(f.fleet, {
      launch: f.launcher(600),
      log: (l) => lines.push(l),
      signal: new AbortController().signal,
      pollMs: 50,
    });
    expect(f.order).toEqual(['SHOP-2', 'SHOP-3', 'SHOP-4']);
    expect(f.most()).toBe(2);
    expect(final.workstreams.map((w) => w.state)).toEqual(['ready', 'ready', 'ready']);
    expect(final.done).toBe(true);
    // Looked at afresh later (chalk fleet --status), the exits the supervisor saw still count.
    const later = await snapshot(f.fleet, newMemory(readStatus(fleetPaths('shop', 'SHOP-1', f.fleet.env).status)));
    expect(later.status.workstreams.map((w) => w.state)).toEqual(['ready', 'ready', 'ready']);
    expect(lines.findIndex((l) => l.startsWith('started SHOP-4'))).toBeGreaterThan(
      lines.findIndex((l) => / -> ready$/.test(l)),
    );
  });

  it('starts a detained workstream once more after office hours marks it, and never twice for one visit', async () => {
    let detained = true;
    const f = fleetWith({
      tickets: ['SHOP-2', 'SHOP-3'],
      slots: 2,
      summaries: () =>
        detained ? [{ ticket: 'SHOP-2', state: 'detained', loops: 2, costUsd: 0.2, fixes: 0, lastActiveAt: null }] : [],
    });
    const paths = fleetPaths('shop', 'SHOP-1', f.fleet.env);
    mkdirSync(paths.dir, { recursive: true });
    // An earlier look: SHOP-2 was started, and ended detained.
    writeFileSync(paths.status, JSON.stringify({ started: ['SHOP-2'], workstreams: [] }));
    const ws = runPaths('shop', 'SHOP-2', f.fleet.env);
    mkdirSync(ws.dir, { recursive: true });
    const rejoin = ws.rejoin;
    writeFileSync(rejoin, 'tutoring/SHOP-2-1700000000\n');
    const lines: string[] = [];
    const run = () =>
      supervise(f.fleet, {
        launch: f.launcher(100),
        log: (l) => lines.push(l),
        signal: new AbortController().signal,
        pollMs: 50,
      });
    const first = await run();
    expect(f.order.sort()).toEqual(['SHOP-2', 'SHOP-3']);
    expect(lines.some((l) => l.includes('again after office hours on tutoring/SHOP-2-1700000000'))).toBe(true);
    expect(first.rejoined).toEqual({ 'SHOP-2': 'tutoring/SHOP-2-1700000000' });
    // The same visit's mark, seen by a later supervisor (a restart): nothing starts again.
    detained = true;
    await run();
    expect(f.order.sort()).toEqual(['SHOP-2', 'SHOP-3']);
    // A second visit (a new tutoring branch) is a new start.
    writeFileSync(rejoin, 'tutoring/SHOP-2-1700000500\n');
    await run();
    expect(f.order.filter((t) => t === 'SHOP-2')).toHaveLength(2);
  });

  it('waits for a store it cannot read under a ceiling instead of starting or giving up, then goes on', async () => {
    let failing = true;
    const f = fleetWith({
      tickets: ['SHOP-2'],
      slots: 2,
      ceiling: 5,
      summaries: () => {
        if (failing) throw new Error('connection refused');
        return [];
      },
    });
    const lines: string[] = [];
    const done = supervise(f.fleet, {
      launch: f.launcher(100),
      log: (l) => lines.push(l),
      signal: new AbortController().signal,
      pollMs: 50,
    });
    const end = Date.now() + 10_000;
    while (!lines.some((l) => l.includes("the fleet's spend cannot be read (connection refused)"))) {
      if (Date.now() > end) throw new Error(lines.join('\n'));
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(f.order).toEqual([]);
    failing = false;
    const final = await done;
    expect(f.order).toEqual(['SHOP-2']);
    expect(final.workstreams.map((w) => w.state)).toEqual(['ready']);
    expect(lines).toContain('the store answers again');
  });

  it('asked to stop, sends SIGTERM to the runs in flight, starts nothing more and returns once they end', async () => {
    const f = fleetWith({ tickets: ['SHOP-2', 'SHOP-3'], slots: 1, summaries: () => [] });
    const stop = new AbortController();
    const lines: string[] = [];
    const done = supervise(f.fleet, {
      launch: f.launcher(60_000),
      log: (l) => lines.push(l),
      signal: stop.signal,
      pollMs: 50,
    });
    const end = Date.now() + 10_000;
    while (f.order.length === 0) {
      if (Date.now() > end) throw new Error('nothing started');
      await new Promise((r) => setTimeout(r, 20));
    }
    const [pid] = [...f.live];
    stop.abort();
    const final = await done;
    expect(alive(pid as number)).toBe(false);
    expect(f.order).toEqual(['SHOP-2']);
    expect(final.workstreams.map((w) => w.state)).toEqual(['stopped', 'queued']);
    expect(lines.some((l) => l.startsWith('stopping SHOP-2 (SIGTERM'))).toBe(true);
  });
});
