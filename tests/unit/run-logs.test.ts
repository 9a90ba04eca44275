import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { STOPPED_NOTE, showLog } from '../../core/run/commands/logs.js';
import { runRecord } from '../../core/run/resume/resume.js';

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

  it('after the log of a killed run (its record never ended, its process gone) says so and that chalk run resumes it', async () => {
    const p = paths();
    writeFileSync(p.runLog, '[SHOP-7] loop 2 (continue): agent ok ($0.02, 3s), rubric exit 0.\n');
    const child = spawn('true', { stdio: 'ignore' });
    await new Promise((r) => child.on('exit', r));
    writeFileSync(p.pid, `${child.pid}\n`);
    const record = (ended: string | null) =>
      JSON.stringify(
        runRecord({
          runId: 'SHOP-7-1',
          startedAt: new Date(),
          now: new Date(),
          counts: { loop: 2, failures: 0, guarded: 0, failedReviews: 0 },
          ended,
        }),
      );
    writeFileSync(p.record, record(null));
    for (const follow of [false, true]) {
      let out = '';
      await showLog(p, 'SHOP-7', { follow, write: (s) => (out += s) });
      expect(out).toBe(`[SHOP-7] loop 2 (continue): agent ok ($0.02, 3s), rubric exit 0.\n${STOPPED_NOTE}`);
    }
    // A run that ended (here detained) gets no such line.
    writeFileSync(p.record, record('detained'));
    let out = '';
    await showLog(p, 'SHOP-7', { follow: true, write: (s) => (out += s) });
    expect(out).not.toContain(STOPPED_NOTE);
  });
});
