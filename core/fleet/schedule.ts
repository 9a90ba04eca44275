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
