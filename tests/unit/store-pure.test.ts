import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../core/errors.js';
import { acquireLock } from '../../core/process/lock.js';
import { alive } from '../../core/process/pid.js';
import { cleanUrl } from '../../core/store/decisions.js';
import { connectionError } from '../../core/store/errors.js';
import { psqlEnvironment } from '../../core/store/psql.js';
import { describeUrl, urlWithoutPassword } from '../../core/store/target.js';
import { deriveState } from '../../core/store/tickets.js';

const at = (s: number) => new Date(1_700_000_000_000 + s * 1000);

describe('ticket state', () => {
  it.each([
    [
      'submitted after the last call',
      { kind: 'submitted', at: at(10) },
      { kind: 'review', agentStatus: 'pass', at: at(9) },
      'submitted',
    ],
    [
      'detention at the same time as the call',
      { kind: 'detention', at: at(5) },
      { kind: 'continue', agentStatus: 'ok', at: at(5) },
      'detained',
    ],
    [
      'spec blocked',
      { kind: 'spec_blocked', at: at(3) },
      { kind: 'spec-check', agentStatus: 'fail', at: at(2) },
      'spec-blocked',
    ],
    ['ready event', { kind: 'ready', at: at(3) }, null, 'done'],
    [
      'a call after the event hides it',
      { kind: 'detention', at: at(3) },
      { kind: 'fix-review', agentStatus: 'ok', at: at(4) },
      'stopped',
    ],
    ['last call a passing review', null, { kind: 'review', agentStatus: 'pass', at: at(1) }, 'done'],
    ['last call a failing review', null, { kind: 'review', agentStatus: 'fail', at: at(1) }, 'stopped'],
    ['no call, no event', null, null, 'new'],
  ] as const)('%s', (_, lastEvent, lastCall, state) => {
    expect(deriveState({ lastEvent, lastCall })).toBe(state);
  });
});

describe('connection strings', () => {
  const url = 'postgresql://alice:s3cr%40t@db.example.com:6543/chalk?sslmode=require';
  it('describes the server without user or password', () => {
    expect(describeUrl(url)).toBe('db.example.com:6543/chalk');
    expect(urlWithoutPassword(url)).toBe('postgresql://alice@db.example.com:6543/chalk?sslmode=require');
    expect(cleanUrl('https://u:p@decider.example/v1')).toBe('https://decider.example/v1');
  });
  it('gives psql the connection through the environment only', () => {
    expect(psqlEnvironment({ kind: 'server', url })).toEqual({
      PGHOST: 'db.example.com',
      PGPORT: '6543',
      PGUSER: 'alice',
      PGPASSWORD: 's3cr@t',
      PGDATABASE: 'chalk',
      PGSSLMODE: 'require',
    });
  });
  it('turns connection failures into one line naming the host and what to check, never the password', () => {
    const where = describeUrl(url);
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6543'), { code: 'ECONNREFUSED' });
    const auth = Object.assign(new Error(`password authentication failed for user "alice" ${url}`), { code: '28P01' });
    for (const [err, hint] of [
      [refused, /server running/],
      [auth, /user and password/],
    ] as const) {
      const e = connectionError(err, where, 'server');
      expect(e).toBeInstanceOf(UserError);
      expect(e.message).toContain('db.example.com:6543');
      expect(e.message).toMatch(hint);
      expect(e.message).not.toContain('s3cr');
      expect(e.message.split('\n')).toHaveLength(1);
    }
  });
});

describe("pg's import", () => {
  it("skips pg's Workers probe (no Response is looked up) and leaves no navigator behind", () => {
    // A fresh node, so pg is imported here for the first time; a Response looked up means the probe ran.
    const script = `
      let looked = 0;
      const real = globalThis.Response;
      Object.defineProperty(globalThis, 'Response', { configurable: true, get() { looked++; return real; } });
      const had = 'navigator' in globalThis ? typeof globalThis.navigator : 'absent';
      const { importPg } = await import(${JSON.stringify(join(import.meta.dirname, '../../dist/core/store/pg-import.js'))});
      const pg = await importPg();
      const left = 'navigator' in globalThis ? typeof globalThis.navigator : 'absent';
      console.log(JSON.stringify({ looked, pool: typeof pg.Pool, same: had === left }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ looked: 0, pool: 'function', same: true });
  });
});

describe('machine-wide start lock', () => {
  const deadPid = () => {
    const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    return Number(r.stdout.toString());
  };

  it('clears a lock whose holder is dead', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chalk-lock-'));
    const lock = join(dir, 'start.lock');
    mkdirSync(lock);
    const pid = deadPid();
    expect(alive(pid)).toBe(false);
    writeFileSync(join(lock, 'pid'), `${pid}\n`);
    const release = await acquireLock(lock, 5_000);
    expect(readFileSync(join(lock, 'pid'), 'utf8').trim()).toBe(String(process.pid));
    release();
    expect(existsSync(lock)).toBe(false);
  });

  it('waits while a live holder has it, and one holder at a time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chalk-lock-'));
    const lock = join(dir, 'start.lock');
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        const release = await acquireLock(lock, 10_000);
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 30));
        inside--;
        release();
      }),
    );
    expect(most).toBe(1);
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), `${process.pid}\n`);
    await expect(acquireLock(lock, 300)).rejects.toThrow(/timed out/);
  });
});
