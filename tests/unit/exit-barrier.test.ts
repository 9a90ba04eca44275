import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { exitBarrier, holdExit } from '../../core/process/exit-barrier.js';
import { installSignalHandlers } from '../../plugins/sandbox-docker/signals.js';

describe('the exit barrier', () => {
  it('settles at once when nothing is held, and after everything held (failures included)', async () => {
    await exitBarrier();
    let release!: () => void;
    holdExit(new Promise<void>((r) => (release = r)));
    holdExit(Promise.reject(new Error('a record that failed still lets the process go')));
    let done = false;
    const waiting = exitBarrier().then(() => (done = true));
    await tick();
    await tick();
    expect(done).toBe(false);
    release();
    await waiting;
    expect(done).toBe(true);
  });

  it("the sandbox plugin's SIGTERM handler exits only once the held record is written", async () => {
    const exits: number[] = [];
    installSignalHandlers((code) => exits.push(code));
    let written!: () => void;
    holdExit(new Promise<void>((r) => (written = r)));
    process.emit('SIGTERM');
    // No sandbox is open, so without the barrier the handler would exit within these turns.
    for (let i = 0; i < 5; i++) await tick();
    expect(exits).toEqual([]);
    written();
    await exitBarrier();
    for (let i = 0; i < 5 && exits.length === 0; i++) await tick();
    expect(exits).toEqual([143]);
  });
});
