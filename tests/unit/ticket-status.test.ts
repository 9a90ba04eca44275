import { mkdirSync, mkdtempSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runsDir } from '../../core/layout.js';
import type { Store, TicketSummary } from '../../core/ports/store.js';
import { countDetentions, ticketStatus } from '../../core/run/commands/ticket-status.js';

const summary = (ticket: string, at: Date): TicketSummary => ({
  ticket,
  state: 'new',
  loops: 0,
  costUsd: 0,
  fixes: 0,
  lastActiveAt: at,
});

/** The store's answer, in its own order (newest first at the database's precision). */
const storeOf = (rows: TicketSummary[]) => async () =>
  ({ tickets: { summaries: async () => rows }, close: async () => {} }) as unknown as Store;

function setup() {
  const state = mkdtempSync(join(tmpdir(), 'chalk-status-unit-'));
  // Not a git repository: no detention branches.
  const root = mkdtempSync(join(tmpdir(), 'chalk-status-root-'));
  return { env: { XDG_STATE_HOME: state }, root };
}

describe('chalk status order', () => {
  it('keeps the database order for tickets whose newest rows fall in the same millisecond', async () => {
    const { env, root } = setup();
    const ms = new Date('2026-01-02T03:04:05.678Z');
    // Name order would be PROJ-1, PROJ-10, PROJ-9: the store's order must win over it.
    const rows = [summary('PROJ-9', ms), summary('PROJ-10', ms), summary('PROJ-1', ms)];
    const r = await ticketStatus({ repo: 'shop', root, env, store: storeOf(rows) });
    expect(r.tickets.map((t) => t.ticket)).toEqual(['PROJ-9', 'PROJ-10', 'PROJ-1']);
  });

  it('puts a newer run directory first, and orders a tie with no database row by name, after the known ones', async () => {
    const { env, root } = setup();
    const ms = new Date('2026-01-02T03:04:05.678Z');
    const dirs = runsDir('shop', env);
    for (const [ticket, at] of [
      ['PROJ-7', new Date(ms.getTime() + 1)],
      ['PROJ-5', ms],
      ['PROJ-4', ms],
    ] as const) {
      mkdirSync(join(dirs, ticket), { recursive: true });
      utimesSync(join(dirs, ticket), at, at);
    }
    const rows = [summary('PROJ-3', ms), summary('PROJ-2', new Date(ms.getTime() - 1))];
    const r = await ticketStatus({ repo: 'shop', root, env, store: storeOf(rows) });
    expect(r.tickets.map((t) => t.ticket)).toEqual(['PROJ-7', 'PROJ-3', 'PROJ-4', 'PROJ-5', 'PROJ-2']);
    expect(r.databaseError).toBeNull();
  });

  it('orders by name alone when the database cannot be read', async () => {
    const { env, root } = setup();
    const ms = new Date('2026-01-02T03:04:05.678Z');
    const dirs = runsDir('shop', env);
    for (const ticket of ['PROJ-2', 'PROJ-1']) {
      mkdirSync(join(dirs, ticket), { recursive: true });
      utimesSync(join(dirs, ticket), ms, ms);
    }
    const broken = async (): Promise<Store> => {
      throw new Error('database unreachable');
    };
    const r = await ticketStatus({ repo: 'shop', root, env, store: broken });
    expect(r.tickets.map((t) => t.ticket)).toEqual(['PROJ-1', 'PROJ-2']);
    expect(r.databaseError).toBe('database unreachable');
  });
});

describe('chalk status and fleets', () => {
  it('names the epic of a ticket a fleet made, and null for any other (or a bad mark)', async () => {
    const { env, root } = setup();
    const at = new Date('2026-01-02T03:04:05.678Z');
    const { writeFileSync } = await import('node:fs');
    const { runPaths } = await import('../../core/layout.js');
    for (const [t, mark] of [
      ['SHOP-2', 'SHOP-100\n'],
      ['SHOP-3', '../../etc\n'],
    ] as const) {
      mkdirSync(runPaths('shop', t, env).dir, { recursive: true });
      writeFileSync(runPaths('shop', t, env).fleet, mark);
    }
    const r = await ticketStatus({
      repo: 'shop',
      root,
      env,
      store: storeOf([summary('SHOP-2', at), summary('SHOP-3', at), summary('SHOP-4', at)]),
    });
    expect(Object.fromEntries(r.tickets.map((t) => [t.ticket, t.epic]))).toEqual({
      'SHOP-2': 'SHOP-100',
      'SHOP-3': null,
      'SHOP-4': null,
    });
  });
});

describe('detention counts', () => {
  it('counts detention/<TICKET>-... branches per ticket and nothing else', () => {
    const counts = countDetentions([
      'detention/SHOP-2-1700000000',
      'detention/SHOP-2-1700000100',
      'detention/SHOP-3-1700000200',
      'detention/nested/SHOP-4-1',
      'detention/shop-5-1',
    ]);
    expect(Object.fromEntries(counts)).toEqual({ 'SHOP-2': 2, 'SHOP-3': 1 });
  });
});
