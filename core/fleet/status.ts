import { readFileSync } from 'node:fs';
import { usd } from './budget.js';
import type { Parallelism } from './parallel.js';
import type { Schedule, WorkstreamState } from './schedule.js';

/** One workstream in a fleet's status. */
export interface WorkstreamStatus {
  ticket: string;
  title: string;
  state: WorkstreamState;
  pid: number | null;
  loops: number;
  costUsd: number;
  startedAt: string | null;
  endedAt: string | null;
  /** The exit code of the run the supervisor started, once it exited (null: unknown). */
  exitCode: number | null;
}

/** A fleet's status (`status.json`, `chalk fleet EPIC --status --json`). */
export interface FleetStatus {
  epic: string;
  supervisor: { pid: number | null; alive: boolean };
  slots: { max: number; how: string; used: number };
  /** The workstreams not started yet, in the order they start. */
  queue: string[];
  /** Why the queue waits: a free slot, the fleet budget (the line says why) or a stop. */
  waiting: { reason: Schedule['waiting']; line: string } | null;
  /** committedUsd is null while the store cannot be read. */
  budget: { ceilingUsd: number | null; spentUsd: number; committedUsd: number | null; worstCaseRunUsd: number };
  workstreams: WorkstreamStatus[];
  /** Every workstream the supervisor started, ever (its journal: none is started twice). */
  started: string[];
  /** The rejoin token each office-hours visit's start consumed, by ticket (absent in older files). */
  rejoined?: Record<string, string>;
  /** Why the store could not be read at the last look (states and spend are then the last known). */
  storeError: string | null;
  /** The supervisor's work is over. */
  done: boolean;
  updatedAt: string;
}

export function readStatus(path: string): FleetStatus | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as FleetStatus;
  } catch {
    return null;
  }
}

export function waitingLine(reason: Schedule['waiting'], o: { parallel: Parallelism; budgetLine: string }): string {
  switch (reason) {
    case 'slot':
      return `waiting for a free slot (${o.parallel.how.startsWith('CHALK_MAX_PARALLEL=') ? o.parallel.how : `CHALK_MAX_PARALLEL=${o.parallel.value}, ${o.parallel.how}`})`;
    case 'budget':
      return o.budgetLine;
    case 'stopping':
      return 'stopping: nothing more starts (chalk fleet --stop)';
    default:
      return '';
  }
}

/** The status as lines for a terminal: the supervisor, the slots, the budget, the queue, then a table. */
export function statusLines(s: FleetStatus): { head: string[]; rows: string[][] } {
  const head = [
    `fleet ${s.epic}: supervisor ${s.supervisor.alive ? `running (pid ${s.supervisor.pid})` : s.done ? 'finished' : 'not running'}`,
    `slots: ${s.slots.used} of ${s.slots.max} in use (${s.slots.how})`,
    `spend: ${usd(s.budget.spentUsd)}${s.budget.ceilingUsd === null ? ' (no ceiling: CHALK_FLEET_BUDGET_USD unset)' : ` of ${usd(s.budget.ceilingUsd)} (CHALK_FLEET_BUDGET_USD); a run at its worst: ${usd(s.budget.worstCaseRunUsd)}`}`,
    `queue: ${s.queue.length === 0 ? 'empty' : s.queue.join(', ')}${s.waiting?.line ? ` (${s.waiting.line})` : ''}`,
    ...(s.storeError ? [`the store cannot be read (${s.storeError}): states and spend are the last known`] : []),
  ];
  const rows = [
    ['TICKET', 'STATE', 'LOOPS', 'COST', 'TITLE'],
    ...s.workstreams.map((w) => [w.ticket, w.state, String(w.loops), usd(w.costUsd), w.title]),
  ];
  return { head, rows };
}

/** The states a finished workstream has done its part in: a request is open, or ready to open. */
const OPENED: ReadonlySet<WorkstreamState> = new Set(['submitted', 'ready']);

/**
 * `chalk fleet`'s last line when not every workstream got to a request (detained, failed,
 * queued behind the budget, still running after the supervisor was killed), naming each with
 * its state; null when all did. The attached command then exits 1, so a script can tell.
 */
export function unfinishedLine(s: Pick<FleetStatus, 'epic' | 'workstreams'>): string | null {
  const rest = s.workstreams.filter((w) => !OPENED.has(w.state));
  if (rest.length === 0) return null;
  const n = s.workstreams.length - rest.length;
  return `fleet ${s.epic}: ${n} of ${s.workstreams.length} workstreams got to a request; ${rest.map((w) => `${w.ticket} ${w.state}`).join(', ')} (chalk fleet ${s.epic} --status)`;
}
