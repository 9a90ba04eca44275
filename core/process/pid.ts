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

/** This boot of the machine (Linux's `/proc/sys/kernel/random/boot_id`), or null where there is none. */
export function bootId(): string | null {
  try {
    const id = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return id === '' ? null : id;
  } catch {
    return null;
  }
}

/**
 * A pid file's text: the pid, then this boot's id on a second line, so that a pid
 * written before a reboot is not taken for a live process that got the same number.
 * `readPid` reads the first line as before.
 */
export const pidFileText = (pid: number, boot: string | null = bootId()): string => `${pid}\n${boot ?? ''}\n`;

/** The boot id a pid file was written on, or null when it says none (or is missing). */
export function pidFileBoot(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').split('\n')[1]?.trim() || null;
  } catch {
    return null;
  }
}

/** Whether a pid written on boot `written` can be a live process now: same boot (or either unknown) and alive. */
export function aliveSince(pid: number, written: string | null, now: string | null = bootId()): boolean {
  if (written !== null && now !== null && written !== now) return false;
  return alive(pid);
}

/** The pid of a pid file whose process is alive and was written on this boot, or null. */
export function livePid(file: string): number | null {
  const pid = readPid(file);
  return pid !== null && aliveSince(pid, pidFileBoot(file)) ? pid : null;
}
