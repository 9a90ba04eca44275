import { lstatSync, readFileSync } from 'node:fs';
import type { RunPaths } from '../../layout.js';
import { checkRecord, parseRecord, type RunRecord } from './resume.js';

/**
 * Reading the run record on disk (the rule is resume.ts; run-record.ts writes it). Apart from
 * the run's start and recorder so that `chalk status` and `chalk logs`, which only read it,
 * load none of the loop's rules.
 */

/** A record is a few hundred bytes; anything bigger is not one. */
const MAX_RECORD_BYTES = 64 * 1024;

/** The ticket's run record, or null when there is none or it is not a record. */
export function readRunRecord(paths: Pick<RunPaths, 'record'>): RunRecord | null {
  try {
    const st = lstatSync(paths.record);
    if (!st.isFile() || st.size > MAX_RECORD_BYTES) return null;
    return parseRecord(readFileSync(paths.record, 'utf8'));
  } catch {
    return null;
  }
}

/** Whether the ticket's last run has no ending (`chalk status` and `chalk logs` ask once its pid file names no live process). */
export function unendedRun(paths: Pick<RunPaths, 'record'>): boolean {
  return checkRecord(readRunRecord(paths)).kind === 'unended';
}
