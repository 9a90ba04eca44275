import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { UserError } from '../../errors.js';
import type { RunPaths } from '../../layout.js';
import { livePid } from '../../process/pid.js';
import { unendedRun } from '../resume/run-record-file.js';

const POLL_MS = 250;

function readFrom(path: string, offset: number, write: (s: string) => void): number {
  const size = statSync(path).size;
  if (size <= offset) return size < offset ? 0 : offset;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    write(buf.subarray(0, n).toString('utf8'));
    return offset + n;
  } finally {
    closeSync(fd);
  }
}

/**
 * `chalk logs TICKET [-f]`: prints a detached run's log; with `follow`, keeps
 * printing what is added until the run's process is gone (or the signal aborts).
 * A run that is over without an ending (killed: its log just stops) gets one
 * line saying so and that `chalk run` resumes it.
 */
export async function showLog(
  paths: RunPaths,
  ticket: string,
  opts: { follow: boolean; write: (s: string) => void; signal?: AbortSignal },
): Promise<void> {
  if (!existsSync(paths.runLog)) throw new UserError(`no background run log for ${ticket}`);
  let offset = readFrom(paths.runLog, 0, opts.write);
  for (;;) {
    const running = livePid(paths.pid) !== null;
    if (!opts.follow || opts.signal?.aborted) return running ? undefined : gone(paths, opts.write);
    await new Promise((r) => setTimeout(r, POLL_MS));
    offset = readFrom(paths.runLog, offset, opts.write);
    if (!running) return gone(paths, opts.write);
  }
}

/** After the log of a run that is over: says so when it ended without an ending (its log stops mid-run). */
function gone(paths: RunPaths, write: (s: string) => void): void {
  if (unendedRun(paths)) write(STOPPED_NOTE);
}

/** What `chalk logs` adds after the log of a run whose process is gone without an ending. */
export const STOPPED_NOTE =
  'chalk: this run stopped without an ending (killed or interrupted; its process is gone); chalk run resumes it\n';
