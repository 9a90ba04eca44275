import { UserError } from '../../errors.js';
import { writeHostFile } from '../../fs/host-file.js';
import type { RunPaths } from '../../layout.js';
import type { Clock } from '../../ports/clock.js';
import type { Log } from '../../ports/log.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { countsOf, type LoopCounts, LoopState } from '../base/policy.js';
import { checkRecord, resumeFrom, resumeLine, runRecord } from './resume.js';
import { readRunRecord } from './run-record-file.js';

/**
 * The run record on disk (the rule is resume.ts): read at the start of a run
 * (run-record-file.ts), written by the run at its start, after every loop and at its ending.
 */

/** How a run starts: its id and the counts it starts from (a resume's, or none). */
export interface RunStart {
  id: string;
  startedAt: Date;
  counts: LoopCounts;
  resumed: boolean;
}

/**
 * Reads the record; when the last run of the ticket ended without an ending,
 * asks the store what it did and continues it (logging `resuming after loop N
 * ($X spent)`, the run's first line); else a new run. Called once the claim
 * is held (a live run was refused there). The store is only asked for an
 * unended record, so a fresh run starts the database and the image side by
 * side as before.
 */
export async function startOrResume(ctx: RunContext, deps: RunDeps, log: Log): Promise<RunStart> {
  const now = deps.clock.now();
  const fresh: RunStart = {
    id: `${ctx.ticket}-${Math.floor(now.getTime() / 1000)}`,
    startedAt: now,
    counts: countsOf(new LoopState()),
    resumed: false,
  };
  const check = checkRecord(readRunRecord(ctx.paths));
  if (check.kind === 'fresh') return fresh;
  let totals: Awaited<ReturnType<RunDeps['store']['calls']['ofRun']>>;
  try {
    totals = await deps.store.calls.ofRun(ctx.repo, check.record.runId);
  } catch (err) {
    throw new UserError(`could not start: database (${err instanceof Error ? err.message : String(err)})`);
  }
  const resume = resumeFrom(check.record, totals);
  if (!resume) return fresh;
  log.info(resumeLine(resume));
  const startedAt = new Date(check.record.startedAt);
  return {
    id: resume.runId,
    startedAt: Number.isNaN(startedAt.getTime()) ? now : startedAt,
    counts: resume.counts,
    resumed: true,
  };
}

/** Writes the run's record: what it has done so far, and its ending. */
export interface RunRecorder {
  /** After a loop (or a failed review): the counts so far, the run still without an ending. */
  progress(counts: LoopCounts): void;
  /** The run's ending (`graduated`, `detained`, `spec-blocked`): the next run starts fresh. */
  end(ending: string, counts: LoopCounts): void;
}

/** Writes the start record (the run so far: none, or the resumed run's counts) and returns the recorder. */
export function recordRun(paths: Pick<RunPaths, 'record'>, start: RunStart, clock: Pick<Clock, 'now'>): RunRecorder {
  const write = (counts: LoopCounts, ended: string | null) =>
    writeHostFile(
      paths.record,
      `${JSON.stringify(runRecord({ runId: start.id, startedAt: start.startedAt, now: clock.now(), counts, ended }))}\n`,
    );
  write(start.counts, null);
  return { progress: (counts) => write(counts, null), end: (ending, counts) => write(counts, ending) };
}
