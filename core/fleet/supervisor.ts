import { existsSync, mkdirSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { writeHostFile } from '../fs/host-file.js';
import { type FleetPaths, fleetPaths } from '../layout.js';
import type { Store, TicketSummary } from '../ports/store.js';
import { budgetLine, committedUsd, type RunLimits, worstCaseRunUsd } from './budget.js';
import type { Parallelism } from './parallel.js';
import type { Plan } from './plan.js';
import { FINISHED, type Schedule, schedule } from './schedule.js';
import { type FleetStatus, readStatus, waitingLine } from './status.js';
import { type Observed, observe, worktreeOf } from './workstreams.js';

/** What a fleet is run with: the plan, where, and the settings read once at start. */
export interface Fleet {
  repo: string;
  /** The main checkout. */
  root: string;
  epic: string;
  base: string;
  plan: Plan;
  parallel: Parallelism;
  limits: RunLimits;
  ceiling: number | null;
  store: Store;
  env?: NodeJS.ProcessEnv;
}

/** What the supervisor remembers between looks. */
export interface Memory {
  started: Set<string>;
  /** Rejoin tokens consumed by a start, by ticket. */
  rejoined: Map<string, string>;
  exits: Map<string, number>;
  times: Map<string, { startedAt: string | null; endedAt: string | null }>;
  stopping: boolean;
  supervisor: { pid: number | null; alive: boolean };
  /** The store's last answer, used while it cannot be read. */
  summaries: TicketSummary[];
  /** Runs this supervisor started whose exit has not been delivered yet. */
  pending: Set<string>;
}

export const newMemory = (previous: FleetStatus | null): Memory => ({
  started: new Set(previous?.started ?? []),
  rejoined: new Map(Object.entries(previous?.rejoined ?? {})),
  exits: new Map(
    (previous?.workstreams ?? []).flatMap((w) => (typeof w.exitCode === 'number' ? [[w.ticket, w.exitCode]] : [])),
  ),
  times: new Map((previous?.workstreams ?? []).map((w) => [w.ticket, { startedAt: w.startedAt, endedAt: w.endedAt }])),
  stopping: false,
  supervisor: { pid: null, alive: false },
  summaries: [],
  pending: new Set(),
});

export interface Snapshot {
  observed: Observed[];
  schedule: Schedule;
  status: FleetStatus;
}

/** The fleet now: each workstream's state, what the rule would start, and the status to show. */
export async function snapshot(f: Fleet, mem: Memory): Promise<Snapshot> {
  // A store that cannot be read does not stop the fleet: the last answer stands in, and with a
  // ceiling nothing new starts until the spend can be read again.
  let storeError: string | null = null;
  try {
    mem.summaries = await f.store.tickets.summaries(f.repo);
  } catch (err) {
    storeError = err instanceof Error ? err.message : String(err);
  }
  const observed = await observe({
    ...f,
    summaries: mem.summaries,
    started: mem.started,
    exits: mem.exits,
    pending: mem.pending,
    rejoined: mem.rejoined,
  });
  const worstCase = worstCaseRunUsd(f.limits);
  const spent = observed.filter((o) => o.state !== 'queued');
  const committed =
    storeError !== null && f.ceiling !== null
      ? Number.POSITIVE_INFINITY
      : committedUsd(
          { spent: spent.map((o) => ({ ticket: o.ticket, usd: o.costUsd, inFlight: o.state === 'running' })) },
          worstCase,
        );
  const sched = schedule({
    workstreams: observed,
    slots: f.parallel.value,
    budget: { ceiling: f.ceiling, committed, worstCase },
    stopping: mem.stopping,
  });
  const line =
    f.ceiling === null
      ? ''
      : storeError !== null
        ? `fleet budget: the fleet's spend cannot be read (${storeError}), so nothing more starts under CHALK_FLEET_BUDGET_USD`
        : budgetLine({ epic: f.epic, ceiling: f.ceiling, committed, next: worstCase });
  const title = new Map(f.plan.workstreams.map((w) => [w.ticket, w.title]));
  const status: FleetStatus = {
    epic: f.epic,
    supervisor: mem.supervisor,
    slots: { max: f.parallel.value, how: f.parallel.how, used: observed.filter((o) => o.state === 'running').length },
    queue: observed.filter((o) => o.state === 'queued').map((o) => o.ticket),
    waiting: sched.waiting
      ? { reason: sched.waiting, line: waitingLine(sched.waiting, { parallel: f.parallel, budgetLine: line }) }
      : null,
    budget: {
      ceilingUsd: f.ceiling,
      spentUsd: Math.round(spent.reduce((s, o) => s + o.costUsd, 0) * 1e6) / 1e6,
      committedUsd: Number.isFinite(committed) ? committed : null,
      worstCaseRunUsd: worstCase,
    },
    workstreams: observed.map((o) => ({
      ticket: o.ticket,
      title: title.get(o.ticket) ?? '',
      state: o.state,
      pid: o.pid,
      loops: o.loops,
      costUsd: o.costUsd,
      startedAt: mem.times.get(o.ticket)?.startedAt ?? null,
      endedAt: mem.times.get(o.ticket)?.endedAt ?? null,
      exitCode: mem.exits.get(o.ticket) ?? null,
    })),
    started: [...mem.started],
    rejoined: Object.fromEntries(mem.rejoined),
    storeError,
    done: sched.done,
    updatedAt: new Date().toISOString(),
  };
  return { observed, schedule: sched, status };
}

/** A started run, as the supervisor sees it. */
export interface Launched {
  pid: number;
  /** Called once with the exit code (128 + signal number when signalled). */
  onExit(cb: (code: number) => void): void;
}

export interface SuperviseOptions {
  /** Starts `chalk run` in the worktree (core/fleet/launch.ts); writes the run's pid file before it returns. */
  launch: (o: { ticket: string; worktree: string }) => Launched;
  /** One line of the supervisor's log. */
  log: (line: string) => void;
  /** Aborted to stop: runs in flight are sent SIGTERM, nothing more starts. */
  signal: AbortSignal;
  /** How often it looks when nothing wakes it (default 1000 ms). */
  pollMs?: number;
  /** Sends a signal to a run (default process.kill). */
  kill?: (pid: number, sig: NodeJS.Signals) => void;
}

/**
 * The supervisor's loop: look, start what the rule says as slots free, write the status,
 * until nothing runs and nothing can start. A run's exit wakes it at once. Asked to stop (the
 * signal, or the stop file), it sends SIGTERM to every run in flight and waits for them.
 */
export async function supervise(f: Fleet, o: SuperviseOptions): Promise<FleetStatus> {
  const paths = fleetPaths(f.repo, f.epic, f.env);
  mkdirSync(paths.dir, { recursive: true });
  const mem = newMemory(readStatus(paths.status));
  mem.supervisor = { pid: process.pid, alive: true };
  const kill = o.kill ?? ((pid: number, sig: NodeJS.Signals) => process.kill(pid, sig));
  let wake: (() => void) | null = null;
  const poke = () => wake?.();
  o.signal.addEventListener('abort', poke, { once: true });
  const last = new Map<string, string>();
  let lastWaiting = '';
  let lastStoreError: string | null = null;
  let stopSent = false;
  o.log(
    `supervisor started (pid ${process.pid}): ${f.plan.workstreams.length} workstreams, ${f.parallel.value} slots (${f.parallel.how})`,
  );
  for (;;) {
    mem.stopping ||= o.signal.aborted || existsSync(paths.stop);
    let snap = await snapshot(f, mem);
    logChanges(snap.observed, last, mem, o.log);
    if (mem.stopping && !stopSent) {
      stopSent = true;
      for (const w of snap.observed) {
        if (w.pid === null) continue;
        o.log(`stopping ${w.ticket} (SIGTERM to pid ${w.pid})`);
        try {
          kill(w.pid, 'SIGTERM');
        } catch {}
      }
    }
    if (snap.schedule.start.length > 0) {
      for (const ticket of snap.schedule.start) {
        // The journal first: a supervisor killed between the two never starts it again.
        mem.started.add(ticket);
        const rejoin = snap.observed.find((w) => w.ticket === ticket)?.rejoin ?? null;
        if (rejoin !== null) {
          mem.rejoined.set(ticket, rejoin);
          mem.exits.delete(ticket);
        }
        const startedAt = new Date().toISOString();
        mem.times.set(ticket, { startedAt, endedAt: null });
        writeStatus(paths, { ...snap.status, started: [...mem.started], rejoined: Object.fromEntries(mem.rejoined) });
        mem.pending.add(ticket);
        let run: Launched;
        try {
          run = o.launch({ ticket, worktree: worktreeOf(f.root, ticket) });
        } catch (err) {
          // Could not be started: it counts as failed (and, being in the journal, is not retried).
          mem.pending.delete(ticket);
          mem.exits.set(ticket, 1);
          o.log(`could not start ${ticket}: ${err instanceof Error ? err.message : String(err)}`);
          continue;
        }
        const used = snap.status.slots.used + snap.schedule.start.indexOf(ticket) + 1;
        const again = rejoin !== null ? `, again after office hours on ${rejoin}` : '';
        o.log(`started ${ticket} (pid ${run.pid}; slot ${used} of ${f.parallel.value}${again})`);
        run.onExit((code) => {
          // When the slot freed: the exit itself, not when the next look notices it.
          const t = mem.times.get(ticket);
          mem.times.set(ticket, { startedAt: t?.startedAt ?? startedAt, endedAt: new Date().toISOString() });
          mem.exits.set(ticket, code);
          mem.pending.delete(ticket);
          poke();
        });
      }
      snap = await snapshot(f, mem);
      logChanges(snap.observed, last, mem, o.log);
    }
    if (snap.status.storeError !== lastStoreError)
      o.log(snap.status.storeError ? `the store cannot be read: ${snap.status.storeError}` : 'the store answers again');
    lastStoreError = snap.status.storeError;
    const waiting = snap.status.waiting && snap.status.queue.length > 0 ? snap.status.waiting.line : '';
    if (waiting !== lastWaiting && waiting !== '') o.log(`queue ${snap.status.queue.join(', ')}: ${waiting}`);
    lastWaiting = waiting;
    // Held only because the spend cannot be read: wait for the store rather than give up.
    const heldByStore = snap.status.storeError !== null && snap.status.queue.length > 0 && !mem.stopping;
    if (snap.schedule.done && !heldByStore) {
      mem.supervisor = { pid: process.pid, alive: false };
      const final = { ...snap.status, supervisor: mem.supervisor };
      writeStatus(paths, final);
      o.log(`supervisor done: ${summary(snap.observed)}`);
      o.signal.removeEventListener('abort', poke);
      return final;
    }
    writeStatus(paths, snap.status);
    await new Promise<void>((resolve) => {
      wake = resolve;
      void delay(o.pollMs ?? 1000).then(resolve);
    });
    wake = null;
  }
}

function writeStatus(paths: FleetPaths, s: FleetStatus): void {
  writeHostFile(paths.status, `${JSON.stringify(s, null, 2)}\n`);
}

function logChanges(observed: Observed[], last: Map<string, string>, mem: Memory, log: (l: string) => void): void {
  for (const w of observed) {
    const before = last.get(w.ticket);
    if (before === w.state) continue;
    last.set(w.ticket, w.state);
    if (before === undefined && w.state === 'queued') continue;
    if (FINISHED.has(w.state)) {
      const t = mem.times.get(w.ticket) ?? { startedAt: null, endedAt: null };
      if (before !== undefined) mem.times.set(w.ticket, { ...t, endedAt: t.endedAt ?? new Date().toISOString() });
    }
    log(before === undefined ? `${w.ticket}: ${w.state}` : `${w.ticket}: ${before} -> ${w.state}`);
  }
}

const summary = (observed: Observed[]) => {
  const counts = new Map<string, number>();
  for (const w of observed) counts.set(w.state, (counts.get(w.state) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
};
