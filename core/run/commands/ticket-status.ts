import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { forEachRef } from '../../git/host-git.js';
import { runPaths, runsDir } from '../../layout.js';
import type { HostGit } from '../../ports/host-git.js';
import type { Store, TicketSummary } from '../../ports/store.js';
import { livePid } from '../../process/pid.js';
import { TICKET_RE, ticketKeyIn } from '../../repo/git.js';
import { unendedRun } from '../resume/run-record-file.js';

/** One line of `chalk status`. Numbers are null when the database could not be read. */
export interface TicketStatus {
  ticket: string;
  state: TicketSummary['state'] | 'running' | null;
  loops: number | null;
  costUsd: number | null;
  fixes: number | null;
  detentions: number;
  lastActiveAt: Date | null;
  /** The epic whose fleet made the ticket (its run directory says), or null. */
  epic: string | null;
}

/** The epic a fleet recorded in the ticket's run directory, or null. */

export interface StatusReport {
  tickets: TicketStatus[];
  /** Why the numbers are missing, once; null when the database was read. */
  databaseError: string | null;
}

/** Counts of local `detention/<TICKET>-*` branches per ticket. */
export async function detentionCounts(
  root: string,
  git: Pick<HostGit, 'forEachRef'> = { forEachRef },
): Promise<Map<string, number>> {
  return countDetentions(await git.forEachRef(root, ['refs/heads/detention/']).catch(() => []));
}

/** Counts per ticket of the branch names `detention/<TICKET>-...` among `names`. */
export function countDetentions(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) {
    const m = /^detention\/([A-Z][A-Z0-9]+-[0-9]+)-/.exec(name.trim());
    if (m?.[1]) counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  return counts;
}

/** Run directories of the repository with their last modification time. */
function runDirectories(repo: string, env: NodeJS.ProcessEnv): Map<string, Date> {
  const out = new Map<string, Date>();
  const dir = runsDir(repo, env);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    if (!TICKET_RE.test(n)) continue;
    try {
      out.set(n, statSync(join(dir, n)).mtime);
    } catch {
      // vanished meanwhile
    }
  }
  return out;
}

/**
 * The repository's tickets (run directories, and tickets the database knows), most recently
 * active first: state (`running` when the run's recorded pid is alive, `stopped` when its run record never
 * ended and its process is gone), loops, cost, fixes,
 * detentions. A database that cannot be read leaves the numbers null and says why once.
 */
export async function ticketStatus(opts: {
  repo: string;
  root: string;
  store: () => Promise<Store>;
  env?: NodeJS.ProcessEnv;
  /** Host git (default: core/git). */
  git?: Pick<HostGit, 'forEachRef'>;
  /** The detention branches' counts when the caller has them (chalk status asks git for them with the repository's name). */
  detentions?: Map<string, number>;
}): Promise<StatusReport> {
  const env = opts.env ?? process.env;
  // git lists the detention branches while the database is asked.
  const counting = opts.detentions ? Promise.resolve(opts.detentions) : detentionCounts(opts.root, opts.git);
  const dirs = runDirectories(opts.repo, env);
  let summaries: TicketSummary[] = [];
  let databaseError: string | null = null;
  try {
    const store = await opts.store();
    try {
      summaries = await store.tickets.summaries(opts.repo);
    } finally {
      await store.close();
    }
  } catch (err) {
    databaseError = err instanceof Error ? err.message : String(err);
  }
  const detentions = await counting;
  const byTicket = new Map(summaries.map((s) => [s.ticket, s]));
  const tickets = new Set([...dirs.keys(), ...byTicket.keys(), ...detentions.keys()]);
  const rows: TicketStatus[] = [...tickets].map((ticket) => {
    const s = byTicket.get(ticket);
    const paths = runPaths(opts.repo, ticket, env);
    const dirTime = dirs.get(ticket) ?? null;
    const dbTime = s?.lastActiveAt ?? null;
    const last = dirTime && dbTime ? new Date(Math.max(dirTime.getTime(), dbTime.getTime())) : (dirTime ?? dbTime);
    const known = databaseError === null;
    return {
      ticket,
      // A run whose process is gone without an ending (killed, a reboot) is stopped, whatever its last row says.
      state:
        livePid(paths.pid) !== null ? 'running' : unendedRun(paths) ? 'stopped' : known ? (s?.state ?? 'new') : null,
      loops: known ? (s?.loops ?? 0) : null,
      costUsd: known ? (s?.costUsd ?? 0) : null,
      fixes: known ? (s?.fixes ?? 0) : null,
      detentions: detentions.get(ticket) ?? 0,
      lastActiveAt: last,
      epic: ticketKeyIn(paths.fleet),
    };
  });
  // Newest first. A Date keeps milliseconds and the database microseconds, so two tickets whose
  // rows fall in one millisecond compare equal here: they keep the database's order (newest
  // first at full precision), then the ticket name, so the order is total and never a tie.
  const rank = new Map(summaries.map((s, i) => [s.ticket, i]));
  const rankOf = (t: string) => rank.get(t) ?? summaries.length;
  rows.sort(
    (a, b) =>
      (b.lastActiveAt?.getTime() ?? 0) - (a.lastActiveAt?.getTime() ?? 0) ||
      rankOf(a.ticket) - rankOf(b.ticket) ||
      a.ticket.localeCompare(b.ticket),
  );
  return { tickets: rows, databaseError };
}
