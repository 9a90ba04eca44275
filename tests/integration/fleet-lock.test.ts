import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquirePidLock, liveHolder, releasePidLock } from '../../core/fleet/lock.js';
import { readPid } from '../../core/process/pid.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'chalk-fleet-lock-'));
  made.push(d);
  return join(d, 'supervisor.pid');
};

/** A pid that is certainly dead: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid as number;
}

describe("the supervisor's pid lock", () => {
  it('one holder: a second live process is refused, the holder again is not', () => {
    const path = fresh();
    expect(acquirePidLock(path, process.pid)).toBe(true);
    expect(acquirePidLock(path, process.ppid)).toBe(false);
    expect(acquirePidLock(path, process.pid)).toBe(true);
    expect(liveHolder(path)).toBe(process.pid);
    releasePidLock(path, process.ppid);
    expect(existsSync(path)).toBe(true);
    releasePidLock(path, process.pid);
    expect(existsSync(path)).toBe(false);
    expect(liveHolder(path)).toBeNull();
  });

  it("takes over a dead holder's lock", async () => {
    const path = fresh();
    const dead = await deadPid();
    writeFileSync(path, `${dead}\n`);
    expect(liveHolder(path)).toBeNull();
    expect(acquirePidLock(path, process.pid)).toBe(true);
    expect(readPid(path)).toBe(process.pid);
  });

  // The built module (npx tsc -p tsconfig.build.json), in separate processes.
  it('of several processes racing for it, exactly one wins', async () => {
    const path = fresh();
    const script = `const { acquirePidLock } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'core', 'fleet', 'lock.js')).href)}); process.stdout.write(String(acquirePidLock(${JSON.stringify(path)}))); setTimeout(() => {}, 1500);`;
    // The children hold their pids alive while the others try.
    const results = await Promise.all(
      Array.from({ length: 4 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
        });
        return new Promise<string>((r) => child.once('exit', () => r(out)));
      }),
    );
    expect(results.filter((r) => r === 'true')).toHaveLength(1);
    expect(results.filter((r) => r === 'false')).toHaveLength(3);
  });
});
