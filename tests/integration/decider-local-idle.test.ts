import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { tryLock, waitForTurn } from '../../core/process/lock.js';
import { alive } from '../../core/process/pid.js';
import { LocalDecider } from '../../plugins/decider-local/client.js';
import { localDeciderPathsIn } from '../../plugins/decider-local/paths.js';
import { startingReason } from '../../plugins/decider-local/services.js';
import { FakeDecider } from '../fakes/decider-server.js';
import { tempDir } from '../helpers/cli.js';

/**
 * The idle watcher (the built watch-main.js, a real process) stops both services once nothing
 * asked for CHALK_DECIDER_IDLE_MINUTES (given here in ms), and keeps them while questions come;
 * the turn lock's edges (a dead holder, a spent budget).
 */

const WATCH = join(import.meta.dirname, '..', '..', 'dist', 'plugins', 'decider-local', 'watch-main.js');
const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.pid && alive(c.pid)) c.kill('SIGKILL');
});

function detached(args: string[]): ChildProcess {
  const c = spawn(process.execPath, args, { detached: true, stdio: 'ignore' });
  c.unref();
  started.push(c);
  return c;
}

function services(idleMs: number) {
  const dir = join(tempDir(), 'decider');
  mkdirSync(dir);
  const paths = localDeciderPathsIn(dir);
  const decider = detached(['-e', 'setInterval(() => {}, 1e9)']);
  const embed = detached(['-e', 'setInterval(() => {}, 1e9)']);
  writeFileSync(paths.deciderPid, `${decider.pid}\n`);
  writeFileSync(paths.embedPid, `${embed.pid}\n`);
  writeFileSync(paths.lastUsed, '');
  const watcher = detached([WATCH, '--dir', dir, '--idle-ms', String(idleMs), '--every-ms', '100']);
  writeFileSync(paths.watchPid, `${watcher.pid}\n`);
  return { paths, pids: [decider.pid as number, embed.pid as number, watcher.pid as number] };
}

async function until(what: string, probe: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('the idle watcher', () => {
  it('stops both services and itself once nothing was asked for the idle time', async () => {
    const { pids } = services(300);
    await until('every process to exit', () => pids.every((p) => !alive(p)));
  });

  it('keeps them while questions come, then stops them', async () => {
    const { paths, pids } = services(1_500);
    const end = Date.now() + 2_500;
    while (Date.now() < end) {
      const now = new Date();
      utimesSync(paths.lastUsed, now, now);
      await sleep(100);
    }
    expect(pids.every((p) => alive(p))).toBe(true);
    await until('every process to exit', () => pids.every((p) => !alive(p)));
  });

  it('stops the other service when one is gone', async () => {
    const { pids } = services(60_000);
    process.kill(pids[0] as number, 'SIGKILL');
    await until('the rest to exit', () => pids.every((p) => !alive(p)));
  });
});

describe('turns at the local decider', () => {
  it('a lock left by a dead process is cleared, and the turn comes', async () => {
    const lock = join(tempDir(), 'ask.lock');
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => dead.once('exit', r));
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), `${dead.pid}\n`);
    const release = await waitForTurn(lock, { waitMs: 500 });
    expect(release).not.toBeNull();
    expect(tryLock(lock)).toBeNull();
    release?.();
    expect(tryLock(lock)).not.toBeNull();
  });

  it('the health probe (no /health) takes a turn; GET /health does not', async () => {
    const fake = await new FakeDecider().start(); // /health answers 404
    const lock = join(tempDir(), 'ask.lock');
    const held = tryLock(lock);
    try {
      const d = new LocalDecider({
        entry: {
          id: 'decider',
          url: fake.url,
          maxContextTokens: 4096,
          limit: { kind: 'concurrency', maxConcurrent: 4 },
        },
        askLock: lock,
      });
      const h = await d.health();
      expect(h).toMatchObject({ healthy: false, status: 'busy', via: 'probe' });
      expect(fake.healthCalls).toBe(1);
      expect(fake.requests).toHaveLength(0);
      held?.();
      expect(await d.health()).toMatchObject({ healthy: true, via: 'probe' });
      expect(fake.requests).toHaveLength(1);
      await d.close();
    } finally {
      held?.();
      await fake.stop();
    }
  });

  it('holds on to shadow when the measured median is 1 s or more, or was never measured', () => {
    const entry = {
      id: 'decider',
      url: 'http://127.0.0.1:1',
      maxContextTokens: 4096,
      limit: { kind: 'concurrency' as const, maxConcurrent: 4 },
    };
    const at = (medianMs?: number | null) =>
      new LocalDecider({
        entry,
        askLock: join(tempDir(), 'ask.lock'),
        ...(medianMs !== undefined ? { medianMs } : {}),
      }).holdReason();
    expect(at(999)).toBeNull();
    expect(at(1_000)).toBe(
      'the local decider answers in a median of 1000 ms on this machine (chalk decider up measured it), and a loop can wait under 1 s',
    );
    expect(at(null)).toMatch(/never measured.*chalk decider up/);
    expect(at()).toBeNull();
  });

  it('answers and health name the installed revision', async () => {
    const fake = await new FakeDecider({
      model: 'strands-decider-2B-hobson-v19',
      health: { status: 200, body: { status: 'ok', model: 'strands-decider-2B-hobson-v19' } },
    }).start();
    try {
      const d = new LocalDecider({
        entry: {
          id: 'decider',
          url: fake.url,
          maxContextTokens: 4096,
          limit: { kind: 'concurrency', maxConcurrent: 4 },
        },
        askLock: join(tempDir(), 'ask.lock'),
        revision: '4f1c2a9e0b7d'.padEnd(40, '0'),
      });
      const req = { state: 's', questions: { stuck: { type: 'noul' as const, instructions: 'Stuck?' } } };
      const r = await d.decide(req, { deadline: Date.now() + 2_000 });
      expect(r.ok && r.response.model).toBe('strands-decider-2B-hobson-v19@4f1c2a9');
      expect((await d.health()).model).toBe('strands-decider-2B-hobson-v19@4f1c2a9');
      await d.close();
    } finally {
      await fake.stop();
    }
  });

  it('nothing listening while its process loads is `starting`; after its start time, `unreachable`, and the run is told to start it', async () => {
    const dir = join(tempDir(), 'decider');
    mkdirSync(dir);
    const paths = localDeciderPathsIn(dir);
    const loading = detached(['-e', 'setInterval(() => {}, 1e9)']);
    writeFileSync(paths.deciderPid, `${loading.pid}\n`);
    const closed = await new FakeDecider().start();
    const url = closed.url;
    await closed.stop();
    let wakes = 0;
    const ask = async (startMs: number) => {
      const d = new LocalDecider({
        entry: { id: 'decider', url, maxContextTokens: 4096, limit: { kind: 'concurrency', maxConcurrent: 4 } },
        askLock: paths.askLock,
        starting: () => startingReason(paths, startMs),
        onUnreachable: () => {
          wakes++;
        },
      });
      const r = await d.decide(
        { state: 's', questions: { q: { type: 'noul', instructions: 'Stuck?' } } },
        {
          deadline: Date.now() + 1_000,
        },
      );
      await d.close();
      return r.ok ? null : r.failure;
    };
    const early = await ask(120_000);
    expect(early?.kind).toBe('starting');
    expect(early?.message).toMatch(/^the local decider is still starting \(pid \d+, started \d+s ago\)$/);
    expect(wakes).toBe(0);
    expect((await ask(0))?.kind).toBe('unreachable');
    expect(wakes).toBe(1);
    loading.kill('SIGKILL');
    await until('the loader to exit', () => !alive(loading.pid as number));
    expect(startingReason(paths, 120_000)).toBeNull();
  });

  it('a call with under 50 ms left is budget, and nothing is sent', async () => {
    const fake = await new FakeDecider().start();
    try {
      const d = new LocalDecider({
        entry: {
          id: 'decider',
          url: fake.url,
          maxContextTokens: 4096,
          limit: { kind: 'concurrency', maxConcurrent: 4 },
        },
        askLock: join(tempDir(), 'ask.lock'),
      });
      const req = { state: 's', questions: { stuck: { type: 'noul' as const, instructions: 'Stuck?' } } };
      const r = await d.decide(req, { deadline: Date.now() + 30 });
      expect(r.ok ? null : r.failure.kind).toBe('budget');
      const ok = await d.decide(req, { deadline: Date.now() + 2_000 });
      expect(ok.ok).toBe(true);
      expect(fake.requests).toHaveLength(1);
      await d.close();
    } finally {
      await fake.stop();
    }
  });
});
