import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { aliveSince, bootId, livePid, pidFileBoot, pidFileText, readPid } from '../../core/process/pid.js';
import { refuseLiveRun } from '../../core/run/base/claim.js';

const file = (text: string) => {
  const f = join(mkdtempSync(join(tmpdir(), 'chalk-pid-')), 'pid');
  writeFileSync(f, text);
  return f;
};

describe('pid files across a reboot', () => {
  it('hold the pid and the boot it was written on; readPid reads the pid as before', () => {
    const f = file(pidFileText(1234, 'boot-a'));
    expect(readPid(f)).toBe(1234);
    expect(pidFileBoot(f)).toBe('boot-a');
    expect(pidFileBoot(file('1234\n'))).toBeNull();
  });

  it('a live pid written on another boot is not a live run; on this boot, or with no boot written, it is', () => {
    const now = bootId();
    if (now === null) return; // no /proc: only the pid is known (covered below)
    expect(livePid(file(pidFileText(process.pid, 'another-boot')))).toBeNull();
    expect(livePid(file(pidFileText(process.pid)))).toBe(process.pid);
    expect(livePid(file(`${process.pid}\n`))).toBe(process.pid);
  });

  it('judges the boot before the pid', () => {
    expect(aliveSince(process.pid, 'boot-a', 'boot-b')).toBe(false);
    expect(aliveSince(process.pid, 'boot-a', 'boot-a')).toBe(true);
    expect(aliveSince(process.pid, null, 'boot-b')).toBe(true);
    expect(aliveSince(process.pid, 'boot-a', null)).toBe(true);
  });

  it('chalk run is not refused by a pid file left by a run before a reboot', () => {
    if (bootId() === null) return;
    const paths = runPaths('shop', 'SHOP-7', { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'chalk-pid-')) });
    mkdirSync(paths.dir, { recursive: true });
    // The number now belongs to a live process (this one's parent), written on another boot.
    writeFileSync(paths.pid, pidFileText(process.ppid, 'before-the-reboot'));
    expect(() => refuseLiveRun(paths, 'SHOP-7')).not.toThrow();
    writeFileSync(paths.pid, pidFileText(process.ppid));
    expect(() => refuseLiveRun(paths, 'SHOP-7')).toThrow(`a run for SHOP-7 is already active (pid ${process.ppid})`);
  });
});
