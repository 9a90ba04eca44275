import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { showLog } from '../../core/run/logs.js';

const paths = () => {
  const p = runPaths('shop', 'SHOP-7', { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'chalk-logs-')) });
  mkdirSync(p.dir, { recursive: true });
  return p;
};

describe('chalk logs', () => {
  it('says there is no background log when the run was not detached', async () => {
    await expect(showLog(paths(), 'SHOP-7', { follow: false, write: () => {} })).rejects.toThrow(
      'no background run log for SHOP-7',
    );
  });

  it('prints the log as it is, without following', async () => {
    const p = paths();
    writeFileSync(p.runLog, '[SHOP-7] loop 1 (continue) started\n');
    let out = '';
    await showLog(p, 'SHOP-7', { follow: false, write: (s) => (out += s) });
    expect(out).toBe('[SHOP-7] loop 1 (continue) started\n');
  });

  it('follows what the run adds and returns once its process is gone', async () => {
    const p = paths();
    writeFileSync(p.runLog, 'one\n');
    const child = spawn('sleep', ['1.5'], { stdio: 'ignore' });
    writeFileSync(p.pid, `${child.pid}\n`);
    const exited = new Promise((r) => child.on('exit', r));
    setTimeout(() => appendFileSync(p.runLog, 'two\n'), 300);
    setTimeout(() => appendFileSync(p.runLog, 'three\n'), 900);
    let out = '';
    const started = Date.now();
    await showLog(p, 'SHOP-7', { follow: true, write: (s) => (out += s) });
    await exited;
    expect(out).toBe('one\ntwo\nthree\n');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops following when asked (Ctrl-C)', async () => {
    const p = paths();
    writeFileSync(p.runLog, 'x\n');
    writeFileSync(p.pid, `${process.pid}\n`);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 400);
    await showLog(p, 'SHOP-7', { follow: true, write: () => {}, signal: stop.signal });
    expect(stop.signal.aborted).toBe(true);
  });
});
