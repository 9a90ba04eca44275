import { closeSync, mkdirSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { Config } from '../config/config.js';
import { UserError } from '../errors.js';
import { fleetPaths } from '../layout.js';
import { hasCapacity } from '../ports/sandbox.js';
import type { Store } from '../ports/store.js';
import { alive } from '../process/pid.js';
import { ceilingOf, type RunLimits } from './budget.js';
import { spawnDetachedChalk } from './launch.js';
import { liveHolder } from './lock.js';
import { heldParallel, maxParallel, type Parallelism } from './parallel.js';
import type { Plan } from './plan.js';
import { readStatus } from './status.js';
import { type Fleet, newMemory, snapshot } from './supervisor.js';

/** The limits a run of this configuration works under (for a run's worst case). */
export function runLimits(config: Config): RunLimits {
  return {
    budgetUsd: config.num('CHALK_BUDGET_USD'),
    maxLoops: config.num('CHALK_MAX_LOOPS'),
    specCheck: config.bool('CHALK_SPEC_CHECK'),
    review: config.bool('CHALK_REVIEW'),
    reviewRounds: config.num('CHALK_REVIEW_ROUNDS'),
  };
}

/**
 * CHALK_MAX_PARALLEL, asking the engine through the Sandbox port when it is `auto`; a
 * repository's number is held to CHALK_CEILING_MAX_PARALLEL (by default what auto gives).
 */
export async function parallelism(config: Config, sandbox: () => unknown): Promise<Parallelism> {
  const setting = config.str('CHALK_MAX_PARALLEL');
  const ceiling = config.str('CHALK_CEILING_MAX_PARALLEL');
  const fromRepo = config.entry('CHALK_MAX_PARALLEL').source === 'file';
  if (setting !== 'auto' && !(fromRepo && ceiling === 'auto')) return maxParallel(setting, null);
  let engine = null;
  try {
    const s = sandbox();
    engine = hasCapacity(s) ? await s.capacity() : null;
  } catch {
    engine = null;
  }
  return fromRepo ? heldParallel(setting, ceiling, engine) : maxParallel(setting, engine);
}

export interface FleetSettings {
  config: Config;
  parallel: Parallelism;
}

export function fleetOf(o: {
  repo: string;
  root: string;
  epic: string;
  plan: Plan;
  settings: FleetSettings;
  store: Store;
  env?: NodeJS.ProcessEnv;
}): Fleet {
  const { config, parallel } = o.settings;
  return {
    repo: o.repo,
    root: o.root,
    epic: o.epic,
    base: config.str('CHALK_BASE_BRANCH'),
    plan: o.plan,
    parallel,
    limits: runLimits(config),
    ceiling: ceilingOf(config.str('CHALK_FLEET_BUDGET_USD')),
    store: o.store,
    env: o.env,
  };
}

/** The fleet's status now, observed afresh (the supervisor's journal and times from its last status). */
export async function currentStatus(f: Fleet) {
  const paths = fleetPaths(f.repo, f.epic, f.env);
  const mem = newMemory(readStatus(paths.status));
  const pid = liveHolder(paths.pid);
  mem.supervisor = { pid, alive: pid !== null };
  return (await snapshot(f, mem)).status;
}

/**
 * Starts the epic's supervisor as a detached process (its own session, its output in the
 * fleet's log) unless one is running, and returns its pid once it holds the lock.
 */
export async function startSupervisor(o: {
  repo: string;
  root: string;
  epic: string;
  env: NodeJS.ProcessEnv;
  waitMs?: number;
}): Promise<{ pid: number; started: boolean }> {
  const paths = fleetPaths(o.repo, o.epic, o.env);
  const running = liveHolder(paths.pid);
  if (running !== null) return { pid: running, started: false };
  rmSync(paths.stop, { force: true });
  const child = spawnDetachedChalk({
    args: ['fleet', o.epic, '--supervise'],
    cwd: o.root,
    env: o.env,
    logFile: paths.log,
    append: true,
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.unref();
  const end = Date.now() + (o.waitMs ?? 30_000);
  for (;;) {
    const holder = liveHolder(paths.pid);
    if (holder !== null) return { pid: holder, started: holder === child.pid };
    if (exited && liveHolder(paths.pid) === null)
      throw new UserError(`the fleet's supervisor exited at once; read ${paths.log}`);
    if (Date.now() > end) throw new UserError(`the fleet's supervisor did not start within 30 s; read ${paths.log}`);
    await delay(50);
  }
}

/** Prints the supervisor's log from `offset` as it grows, until the supervisor is gone. */
export async function followLog(o: {
  path: string;
  pid: number;
  write: (text: string) => void;
  offset?: number;
  everyMs?: number;
}): Promise<void> {
  let offset = o.offset ?? 0;
  const readNew = () => {
    let size = 0;
    try {
      size = statSync(o.path).size;
    } catch {
      return;
    }
    if (size <= offset) return;
    const fd = openSync(o.path, 'r');
    try {
      const buf = Buffer.alloc(size - offset);
      readSync(fd, buf, 0, buf.length, offset);
      const text = buf.toString('utf8');
      const upto = text.lastIndexOf('\n') + 1;
      if (upto > 0) {
        o.write(text.slice(0, upto));
        offset += Buffer.byteLength(text.slice(0, upto));
      }
    } finally {
      closeSync(fd);
    }
  };
  while (alive(o.pid)) {
    readNew();
    await delay(o.everyMs ?? 200);
  }
  readNew();
}

/** The log's size now (where following starts). */
export function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * `chalk fleet EPIC --stop`: nothing more starts, every run in flight gets SIGTERM (it ends
 * its call, records it `interrupted` and exits; resuming it is `chalk run`'s), and the
 * supervisor exits once they have. Without a live supervisor (it was killed), the runs are
 * sent SIGTERM from here. Returns once nothing of the fleet runs.
 */
export async function stopFleet(
  f: Fleet,
  o: { waitMs?: number; say?: (line: string) => void } = {},
): Promise<{ supervisor: number | null; runs: string[] }> {
  const paths = fleetPaths(f.repo, f.epic, f.env);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.stop, `${new Date().toISOString()}\n`);
  const holder = liveHolder(paths.pid);
  const end = Date.now() + (o.waitMs ?? 600_000);
  const status = await currentStatus(f);
  const inFlight = status.workstreams.filter((w) => w.pid !== null);
  if (holder !== null) {
    o.say?.(`stopping fleet ${f.epic}: supervisor pid ${holder} sends SIGTERM to ${inFlight.length} run(s) in flight`);
    process.kill(holder, 'SIGTERM');
  } else {
    o.say?.(`stopping fleet ${f.epic}: no supervisor; SIGTERM to ${inFlight.length} run(s) in flight`);
    for (const w of inFlight)
      try {
        process.kill(w.pid as number, 'SIGTERM');
      } catch {}
  }
  const pids = [...(holder !== null ? [holder] : []), ...inFlight.map((w) => w.pid as number)];
  while (pids.some((p) => alive(p))) {
    if (Date.now() > end)
      throw new UserError(`fleet ${f.epic} did not stop within ${Math.round((o.waitMs ?? 600_000) / 1000)} s`);
    await delay(200);
  }
  return { supervisor: holder, runs: inFlight.map((w) => w.ticket) };
}
