import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDecider } from '../fakes/decider-server.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The local decider answers one question at a time, so every chalk process on the machine takes
 * turns: four separate processes asking at once never overlap at the server (the fake counts the
 * requests in flight), and a caller whose turn does not come within 1 second gets `busy` without
 * sending anything.
 */

const CALLER = join(import.meta.dirname, 'decider-local-caller.mjs');
const children: ChildProcess[] = [];
const fakes: FakeDecider[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const f of fakes.splice(0)) await f.stop();
});

interface Outcome {
  ok: boolean;
  kind: string | null;
  elapsed: number;
}

/** Starts `n` caller processes, waits until all are ready, releases them together, collects their outcomes. */
async function askTogether(url: string, n: number, budgetMs: number): Promise<Outcome[]> {
  const lock = join(tempDir(), 'ask.lock');
  const lines = Array.from({ length: n }, () => {
    const child = spawn(process.execPath, [CALLER, url, lock, String(budgetMs)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    children.push(child);
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const seen: string[] = [];
    const waiters: Array<(l: string) => void> = [];
    rl.on('line', (l) => {
      const w = waiters.shift();
      if (w) w(l);
      else seen.push(l);
    });
    return {
      child,
      next: () =>
        new Promise<string>((resolve, reject) => {
          const early = seen.shift();
          if (early !== undefined) return resolve(early);
          waiters.push(resolve);
          child.once('exit', (code) => reject(new Error(`caller exited ${code} before answering`)));
        }),
    };
  });
  for (const l of lines) expect(await l.next()).toBe('ready');
  for (const l of lines) l.child.stdin?.write('go\n');
  return Promise.all(lines.map(async (l) => JSON.parse(await l.next()) as Outcome));
}

describe('four chalk processes at the local decider', () => {
  it('take turns: quick answers are all given, never two at once', async () => {
    const fake = await new FakeDecider({
      script: () => ({ body: { model: 'm', answers: { stuck: { type: 'noul', noul: 0.8 } } }, delayMs: 100 }),
      health: { status: 200, body: { status: 'ok' } },
    }).start();
    fakes.push(fake);
    const outcomes = await askTogether(fake.url, 4, 2_000);
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true, true]);
    expect(fake.peak).toBe(1);
    expect(fake.requests).toHaveLength(4);
    expect(fake.violations).toEqual([]);
  });

  it('never overlap when answers are slow, and the late ones are busy within about a second, sending nothing', async () => {
    const fake = await new FakeDecider({
      script: () => ({ body: { model: 'm', answers: { stuck: { type: 'noul', noul: 0.8 } } }, delayMs: 1_600 }),
      health: { status: 200, body: { status: 'ok' } },
    }).start();
    fakes.push(fake);
    const outcomes = await askTogether(fake.url, 4, 4_000);
    expect(fake.peak).toBe(1);
    const answered = outcomes.filter((o) => o.ok);
    const busy = outcomes.filter((o) => o.kind === 'busy');
    expect(answered.length + busy.length).toBe(4);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    // Only the answered ones reached the server.
    expect(fake.requests).toHaveLength(answered.length);
    for (const b of busy) {
      expect(b.elapsed).toBeGreaterThanOrEqual(950);
      expect(b.elapsed).toBeLessThan(1_500);
    }
  });

  it('a call with little budget waits only what its budget leaves', async () => {
    const fake = await new FakeDecider({
      script: () => ({ body: { model: 'm', answers: { stuck: { type: 'noul', noul: 0.8 } } }, delayMs: 1_600 }),
      health: { status: 200, body: { status: 'ok' } },
    }).start();
    fakes.push(fake);
    const outcomes = await askTogether(fake.url, 2, 300);
    const busy = outcomes.filter((o) => !o.ok);
    // The one that got the turn timed out within its 300 ms; the other gave up its wait by then.
    expect(fake.peak).toBe(1);
    for (const o of outcomes) expect(o.elapsed).toBeLessThan(700);
    expect(busy.map((o) => o.kind).sort()).toEqual(['busy', 'timeout']);
  });
});
