import { mayStart } from './budget.js';

/**
 * The scheduling rule: which workstreams start now, and why the rest wait. Pure: the
 * supervisor observes the workstreams (live pids, branches, the store) and starts what this
 * says, as often as anything changes.
 */

/** Where a workstream is. `queued` has not started; the rest have, and are never started again. */
export const WORKSTREAM_STATES = [
  'queued',
  'running',
  'submitted',
  'ready',
  'detained',
  'spec-blocked',
  'failed',
  'stopped',
] as const;
export type WorkstreamState = (typeof WORKSTREAM_STATES)[number];

/** The states a workstream ends in. */
export const FINISHED: ReadonlySet<WorkstreamState> = new Set([
  'submitted',
  'ready',
  'detained',
  'spec-blocked',
  'failed',
  'stopped',
]);

export interface ScheduleInput {
  /** In plan order: the order they start in. */
  workstreams: readonly { ticket: string; state: WorkstreamState }[];
  slots: number;
  budget: { ceiling: number | null; committed: number; worstCase: number };
  /** Asked to stop: nothing more starts. */
  stopping: boolean;
}

export interface Schedule {
  start: string[];
  /** Why the queued workstreams that do not start now wait (null when none waits). */
  waiting: 'slot' | 'budget' | 'stopping' | null;
  /** Nothing runs and nothing will start: the supervisor's work is over. */
  done: boolean;
}

export function schedule(input: ScheduleInput): Schedule {
  const running = input.workstreams.filter((w) => w.state === 'running').length;
  const queued = input.workstreams.filter((w) => w.state === 'queued').map((w) => w.ticket);
  const start: string[] = [];
  let waiting: Schedule['waiting'] = null;
  let committed = input.budget.committed;
  for (const ticket of queued) {
    if (input.stopping) {
      waiting = 'stopping';
      break;
    }
    if (running + start.length >= input.slots) {
      waiting = 'slot';
      break;
    }
    if (!mayStart({ ...input.budget, committed })) {
      waiting = 'budget';
      break;
    }
    start.push(ticket);
    // A run just started may spend its worst case: the next start counts it.
    committed += input.budget.worstCase;
  }
  const done = running + start.length === 0;
  return { start, waiting, done };
}

/** What is known about one workstream when the supervisor looks. */
export interface WorkstreamFacts {
  /** Its run's pid file names a live process. */
  live: boolean;
  /** The store's state of the ticket (core/store deriveState), when it has rows. */
  recorded?: 'submitted' | 'detained' | 'spec-blocked' | 'done' | 'stopped' | 'new';
  /** Its branch has commits a run made (`chalk(T): <mode>, loop N`). */
  runCommits: boolean;
  /** The supervisor's journal says it was started (before a restart, too). */
  started: boolean;
  /** The exit code of the run this supervisor started, once it exited. */
  exitCode: number | null;
  /** Office hours asked for it to run again (its rejoin mark) and no start has consumed that yet. */
  rejoin?: boolean;
}

/** Exit codes of `chalk run` (core/run/loop/run-ticket.ts and the CLI's edge). */
const BY_EXIT: Record<number, WorkstreamState> = {
  0: 'ready',
  3: 'detained',
  4: 'spec-blocked',
  130: 'stopped',
  143: 'stopped',
};

/**
 * A workstream's state: running while its pid lives; else queued again when office hours
 * asked for it (a rejoin mark no start has consumed); else what the store recorded when it
 * ended (submitted, ready, detained, spec-blocked); else what its exit code says; else, once
 * anything shows it started, `stopped` (ended without an outcome: never started again by the
 * fleet); else `queued`.
 */
export function workstreamState(f: WorkstreamFacts): WorkstreamState {
  if (f.live) return 'running';
  // After office hours a detained workstream rejoins the queue, once per visit.
  if (f.rejoin) return 'queued';
  switch (f.recorded) {
    case 'submitted':
      return 'submitted';
    case 'done':
      return 'ready';
    case 'detained':
      return 'detained';
    case 'spec-blocked':
      return 'spec-blocked';
    default:
  }
  if (f.exitCode !== null) return BY_EXIT[f.exitCode] ?? 'failed';
  if (f.started || f.runCommits || f.recorded === 'stopped') return 'stopped';
  return 'queued';
}
