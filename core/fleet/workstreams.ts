import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { writeRepoFile } from '../fs/repo-file.js';
import { HostGitError, hostGit, hostGitOk, oneLine } from '../git/host-git.js';
import { runPaths } from '../layout.js';
import type { HostGit } from '../ports/host-git.js';
import type { TicketSummary } from '../ports/store.js';
import { livePid } from '../process/pid.js';
import { newTicket } from '../setup/new-ticket.js';
import { type Plan, specFromWorkstream, type Workstream } from './plan.js';
import { type WorkstreamFacts, type WorkstreamState, workstreamState } from './schedule.js';

/** Where a workstream's worktree is: `chalk new`'s rule, `<main>.worktrees/TICKET`. */
export const worktreeOf = (root: string, ticket: string) => join(`${root}.worktrees`, ticket);

export interface PreparedWorkstream {
  ticket: string;
  worktree: string;
  /** Made now (false: it was there from an earlier `chalk fleet` of this epic). */
  created: boolean;
}

/**
 * Each workstream as `chalk/TICKET` in its own worktree (as `chalk new` makes them), with the
 * spec written from the plan and committed (`chalk(TICKET): spec`), and the ticket's run
 * directory marked with the epic. A workstream whose branch is there already (this epic's: the
 * plan's validation refused any other) is left as it is.
 */
export async function prepareWorkstreams(o: {
  root: string;
  repo: string;
  epic: string;
  plan: Plan;
  base: string;
  git: HostGit;
  env?: NodeJS.ProcessEnv;
}): Promise<PreparedWorkstream[]> {
  const out: PreparedWorkstream[] = [];
  for (const w of o.plan.workstreams) {
    const worktree = worktreeOf(o.root, w.ticket);
    if (await o.git.refExists(o.root, `refs/heads/chalk/${w.ticket}`)) {
      if (!existsSync(worktree))
        throw new UserError(
          `the worktree of ${w.ticket} (${worktree}) is gone but branch chalk/${w.ticket} is not; run: git worktree add ${worktree} chalk/${w.ticket}`,
        );
      out.push({ ticket: w.ticket, worktree, created: false });
      continue;
    }
    const made = await newTicket({ cwd: o.root, ticket: w.ticket, title: w.title, base: o.base, git: o.git });
    await commitSpec(made.worktree, w);
    markFleet(o.repo, w.ticket, o.epic, o.env);
    out.push({ ticket: w.ticket, worktree: made.worktree, created: true });
  }
  return out;
}

async function commitSpec(worktree: string, w: Workstream): Promise<void> {
  const rel = `specs/${w.ticket}.md`;
  writeRepoFile(worktree, rel, specFromWorkstream(w), { ifExists: 'replace' });
  try {
    await hostGitOk(['add', '--', rel], { cwd: worktree });
    await hostGitOk(['commit', '-q', '--no-verify', '-m', `chalk(${w.ticket}): spec`, '--', rel], { cwd: worktree });
  } catch (err) {
    const why = err instanceof HostGitError ? oneLine(err.message) : String(err);
    throw new UserError(`could not commit the spec of ${w.ticket} in ${worktree}: ${why}`);
  }
}

function markFleet(repo: string, ticket: string, epic: string, env?: NodeJS.ProcessEnv): void {
  const paths = runPaths(repo, ticket, env);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.fleet, `${epic}\n`);
}

/** Whether `chalk/TICKET` has a commit a run made (`chalk(TICKET): <mode>, loop N`) since the base. */
export async function hasRunCommits(root: string, ticket: string, base: string): Promise<boolean> {
  const r = await hostGit(['log', '--format=%s', `${base}..refs/heads/chalk/${ticket}`, '--'], { cwd: root });
  if (r.code !== 0) return false;
  const mark = `chalk(${ticket}): `;
  return r.stdout.split('\n').some((s) => s.startsWith(mark) && /, loop [0-9]+$/.test(s));
}

export interface Observed {
  ticket: string;
  state: WorkstreamState;
  /** The live run's pid. */
  pid: number | null;
  costUsd: number;
  loops: number;
  /** Its rejoin mark's token when office hours asked for another run that has not started yet. */
  rejoin: string | null;
}

/** The rejoin mark office hours left (its token: the tutoring branch), or null. Capped: it is a line. */
export function rejoinMark(path: string): string | null {
  try {
    const token = readFileSync(path, 'utf8').slice(0, 400).split('\n')[0]?.trim() ?? '';
    return token === '' ? null : token;
  } catch {
    return null;
  }
}

/** Each workstream's state now, from its pid file, the store's summaries, its branch and what the supervisor knows. */
export async function observe(o: {
  root: string;
  repo: string;
  base: string;
  plan: Plan;
  summaries: readonly TicketSummary[];
  started: ReadonlySet<string>;
  exits: ReadonlyMap<string, number>;
  /** Runs this supervisor started whose exit it has not been told of yet: still running, whatever the pid says. */
  pending?: ReadonlySet<string>;
  /** The rejoin tokens a start already consumed, by ticket (the journal: a visit runs once). */
  rejoined?: ReadonlyMap<string, string>;
  env?: NodeJS.ProcessEnv;
}): Promise<Observed[]> {
  const byTicket = new Map(o.summaries.map((s) => [s.ticket, s]));
  const out: Observed[] = [];
  for (const w of o.plan.workstreams) {
    const paths = runPaths(o.repo, w.ticket, o.env);
    const pid = livePid(paths.pid);
    const mark = rejoinMark(paths.rejoin);
    const rejoin = mark !== null && o.rejoined?.get(w.ticket) !== mark ? mark : null;
    // A child that has died but whose exit is not delivered yet is still running here, so its
    // exit code (failed, detained, ...) decides its state rather than a guess.
    const live = pid !== null || (o.pending?.has(w.ticket) ?? false);
    const s = byTicket.get(w.ticket);
    const facts: WorkstreamFacts = {
      live,
      recorded: s?.state,
      started: o.started.has(w.ticket),
      exitCode: o.exits.get(w.ticket) ?? null,
      // Only asked when nothing else says it started (one git call per queued workstream).
      runCommits: false,
      rejoin: rejoin !== null,
    };
    if (rejoin === null && workstreamState(facts) === 'queued')
      facts.runCommits = await hasRunCommits(o.root, w.ticket, o.base);
    out.push({
      ticket: w.ticket,
      state: workstreamState(facts),
      pid: live ? pid : null,
      costUsd: s?.costUsd ?? 0,
      loops: s?.loops ?? 0,
      rejoin: live ? null : rejoin,
    });
  }
  return out;
}
