import { readFileSync } from 'node:fs';

/**
 * Whether a process with this pid is running (signal 0 probes without sending anything).
 * A zombie (exited, not yet reaped: common in containers whose init does not reap) is dead.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): trust the signal probe
  }
}

/** The pid written in a file, or null when the file is missing or holds no pid. */
export function readPid(file: string): number | null {
  try {
    const n = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}
