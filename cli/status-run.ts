import type { Writable } from 'node:stream';
import { UserError } from '../core/errors.js';
import { usd } from '../core/fleet/budget.js';
import { repoNameAndBranches } from '../core/repo/git.js';
import { countDetentions, ticketStatus } from '../core/run/commands/ticket-status.js';
import { PgStore } from '../core/store/index.js';
import { commandContext, table } from './command-context.js';

/*
 * What `chalk status` does, apart from how its arguments were read: cli/status.ts runs it as a
 * clipanion command (main.js: `chalk help`, every spelling of the arguments), cli/light.ts
 * directly for the exact forms the binary hands to the bundle (cli/light-words.cts), so that the
 * bundle holds no argument parser at all.
 */

const dash = (v: number | null, f: (n: number) => string = String) => (v === null ? '-' : f(v));

export async function runStatus(opts: { json: boolean }, out: { stdout: Writable; stderr: Writable }): Promise<number> {
  const { root, config } = await commandContext();
  if (!root) throw new UserError('chalk status runs inside a git repository: cd into one');
  // The store opens (pg's import, the connection, the schema check) while one git names the
  // repository and lists its detention branches. git starts once the connection is asked for:
  // starting a process holds this thread for several milliseconds, which the database's
  // answer then no longer waits behind.
  let connecting = () => {};
  const asked = new Promise<void>((resolve) => {
    connecting = resolve;
  });
  const opening = PgStore.forConfig(config, process.env, { connecting });
  opening.catch(() => {}); // ticketStatus reports a store that cannot open
  await Promise.race([
    asked,
    opening.then(
      () => {},
      () => {},
    ),
  ]);
  const { repo, branches } = await repoNameAndBranches(root, 'detention/').catch(async (err: unknown) => {
    await opening.then((s) => s.close()).catch(() => {});
    throw err;
  });
  const report = await ticketStatus({ repo, root, store: () => opening, detentions: countDetentions(branches) });
  if (opts.json) {
    // `repo` is the key the state directory, containers and rows are filed under.
    out.stdout.write(`${JSON.stringify({ repo, ...report }, null, 2)}\n`);
    return 0;
  }
  if (report.databaseError) out.stderr.write(`chalk: numbers unavailable: ${report.databaseError}\n`);
  if (report.tickets.length === 0) {
    out.stdout.write('no tickets yet: start one with chalk new TICKET\n');
    return 0;
  }
  const row = (t: (typeof report.tickets)[number]) => [
    t.ticket,
    t.state ?? '-',
    dash(t.loops),
    dash(t.costUsd, (n) => `$${n.toFixed(2)}`),
    dash(t.fixes),
    String(t.detentions),
  ];
  const head = ['TICKET', 'STATE', 'LOOPS', 'COST', 'FIXES', 'DETENTIONS'];
  const alone = report.tickets.filter((t) => t.epic === null);
  const epics = [...new Set(report.tickets.map((t) => t.epic).filter((e): e is string => e !== null))];
  if (epics.length === 0) {
    out.stdout.write(table([head, ...alone.map(row)]));
    return 0;
  }
  // Tickets a fleet made are grouped under their epic, with the fleet's spend and ceiling.
  const ceiling = config.str('CHALK_FLEET_BUDGET_USD');
  const parts: string[] = [];
  if (alone.length > 0) parts.push(table([head, ...alone.map(row)]));
  for (const epic of epics) {
    const mine = report.tickets.filter((t) => t.epic === epic);
    const spent = report.databaseError ? null : mine.reduce((s, t) => s + (t.costUsd ?? 0), 0);
    const spend = spent === null ? 'spend unknown' : `spent ${usd(spent)}`;
    parts.push(
      `fleet ${epic}: ${spend} of ${ceiling === '' ? 'no ceiling (CHALK_FLEET_BUDGET_USD unset)' : `${usd(Number(ceiling))} (CHALK_FLEET_BUDGET_USD)`}\n${table([head, ...mine.map(row)])}`,
    );
  }
  out.stdout.write(parts.join('\n'));
  return 0;
}
