import { z } from 'zod';
import type { RunTotals } from '../../ports/store.js';
import { usd } from '../../text/money.js';
import type { LoopCounts } from '../base/policy.js';

/**
 * Resuming a run that ended without an ending, pure. A run writes its record
 * (`runs/<TICKET>/run.json`, core/layout.ts) when it starts and after every
 * loop, and marks it ended when it graduates, is detained or is spec-blocked.
 * A run killed by SIGKILL or a reboot runs no exit handler, so what it leaves
 * is a record that never ended (and a pid file naming a dead process); a run
 * stopped by SIGINT/SIGTERM leaves the same (its in-flight call recorded
 * `interrupted`), and so does one that stopped on an error (a push refused).
 * The next `chalk run` of that ticket continues it: same run id, the loop
 * numbers go on, the loop counts carry into CHALK_MAX_LOOPS and
 * CHALK_MAX_RETRIES, and the spend so far (the store's rows of that run id:
 * the store is the source of truth for calls) is reported. The sandbox is
 * fresh from the ticket branch's HEAD, which is the last green commit (green
 * work comes home after every green loop), even when a person moved it.
 */

export const RUN_RECORD_VERSION = 1;

const count = z.number().int().min(0);

const RecordSchema = z.object({
  v: z.literal(RUN_RECORD_VERSION),
  /** `<TICKET>-<epoch>`, kept by every resume of the run. */
  runId: z.string().min(1).max(200),
  startedAt: z.string(),
  updatedAt: z.string(),
  /** The run's ending (`graduated`, `detained`, `spec-blocked`), or null while it has none. */
  ended: z.string().min(1).nullable(),
  /** Loops finished (LoopState.loop after the last finished loop). */
  loops: count,
  failures: count,
  guarded: count,
  failedReviews: count,
});

export type RunRecord = z.infer<typeof RecordSchema>;

/** The record in a file's text, or null when it is missing, unreadable or not a record (then the run starts fresh). */
export function parseRecord(text: string | null): RunRecord | null {
  if (text === null) return null;
  try {
    const r = RecordSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** What the record says before the store is asked. */
export type ResumeCheck =
  /** No record, a record that ended, or nothing to continue: loop 1 of a new run. */
  | { kind: 'fresh' }
  /** A record without an ending: ask the store for its run's totals. */
  | { kind: 'unended'; record: RunRecord };

/**
 * Whether the record is a run to continue. Asked only once this process holds
 * the ticket's claim (claim.ts: a live run's pid file refuses a second run, so
 * a run that is alive is never resumed), or, by `chalk status` and `chalk logs`,
 * once the pid file names no live process.
 */
export function checkRecord(record: RunRecord | null): ResumeCheck {
  if (!record || record.ended !== null) return { kind: 'fresh' };
  return { kind: 'unended', record };
}

/** A run continued: its id, the loop counts it starts from, and what it spent so far. */
export interface Resume {
  runId: string;
  counts: LoopCounts;
  spentUsd: number;
}

/**
 * Continues an unended run from its record and the store's totals for its run
 * id, or null (fresh) when it finished no loop. The record is written after
 * the loop's row, so a kill between the two leaves the store one loop ahead:
 * that loop counts (its number is never run twice) and, when it made no
 * progress, as one more failure. The call in flight when the run was killed
 * has no row (SIGKILL) or an `interrupted` one with no cost (SIGTERM): it is
 * not a finished loop, and its loop runs again under the same number.
 */
export function resumeFrom(record: RunRecord, totals: RunTotals): Resume | null {
  const ahead = totals.lastLoop > record.loops;
  const loops = Math.max(record.loops, totals.lastLoop);
  if (loops === 0) return null;
  return {
    runId: record.runId,
    spentUsd: totals.spentUsd,
    counts: {
      loop: loops,
      failures: ahead ? (totals.lastLoopProgressed ? 0 : record.failures + 1) : record.failures,
      guarded: record.guarded,
      failedReviews: record.failedReviews,
    },
  };
}

/** The first line of a resumed run. */
export const resumeLine = (r: Resume): string => `resuming after loop ${r.counts.loop} (${usd(r.spentUsd)} spent)`;

/** The record as a run writes it: at its start and after every loop (ended null), and at its ending. */
export function runRecord(o: {
  runId: string;
  startedAt: Date;
  now: Date;
  counts: LoopCounts;
  ended?: string | null;
}): RunRecord {
  return {
    v: RUN_RECORD_VERSION,
    runId: o.runId,
    startedAt: o.startedAt.toISOString(),
    updatedAt: o.now.toISOString(),
    ended: o.ended ?? null,
    loops: o.counts.loop,
    failures: o.counts.failures,
    guarded: o.counts.guarded,
    failedReviews: o.counts.failedReviews,
  };
}
