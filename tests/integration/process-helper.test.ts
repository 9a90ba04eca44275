import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../core/process/run.js';
import { holdSpawner, liveSpawner } from '../../core/process/spawner.js';

/**
 * The process helper (core/process/spawner.ts) on real processes: what `run` gives through it is
 * what it gives without it, it is really the helper that starts them, and it neither outlives
 * its holders nor keeps a process from ending.
 */

/** The same checks, as `run` answers them: output, exit codes, input, directory, environment. */
async function answers(dir: string) {
  return Promise.all([
    run('sh', ['-c', 'printf "héllo ✓\\n"; printf "wärn\\n" >&2; exit 3']),
    run('sh', ['-c', 'cat; pwd; echo "$CHALK_HELPER_PROBE"'], {
      cwd: dir,
      input: 'from stdin\n',
      env: { PATH: process.env.PATH, CHALK_HELPER_PROBE: 'given' },
    }),
    run('chalk-no-such-program-here', []),
    run('sleep', ['5'], { timeoutMs: 200 }),
    run('git', ['--version']),
  ]);
}

/** The pid of the process that started `sh` (the helper's, or this one's). */
async function starter(): Promise<number> {
  return Number((await run('sh', ['-c', 'echo $PPID'])).stdout.trim());
}

describe('the process helper', () => {
  const releases: (() => void)[] = [];
  afterEach(() => {
    for (const release of releases.splice(0)) release();
  });

  it('gives what run gives without it, and it is the helper that starts the programs', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'chalk-helper-')));
    try {
      expect(liveSpawner()).toBeNull();
      const direct = await answers(dir);
      expect(await starter()).toBe(process.pid);
      releases.push(holdSpawner());
      expect(liveSpawner()).not.toBeNull();
      const helped = await answers(dir);
      expect(helped).toEqual(direct);
      expect(direct[0]).toEqual({ code: 3, stdout: 'héllo ✓\n', stderr: 'wärn\n' });
      expect(direct[1]).toEqual({ code: 0, stdout: `from stdin\n${dir}\ngiven\n`, stderr: '' });
      expect(direct[2].code).toBe(127);
      expect(direct[3].code).toBe(143);
      const helper = await starter();
      expect(helper).not.toBe(process.pid);
      // Its argv holds nothing but node and its script; the environment went over the channel.
      const argv = readFileSync(`/proc/${helper}/cmdline`, 'utf8').split('\0');
      expect(argv.some((a) => a.includes('spawner-child.js'))).toBe(true);
      expect(argv.join(' ')).not.toContain('given');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops with its last holder; a helper that dies fails what it was asked and run goes on without it', async () => {
    const first = holdSpawner();
    const second = holdSpawner();
    const helper = await starter();
    first();
    first();
    // One holder is left: the same helper still starts programs.
    expect(await starter()).toBe(helper);
    // Killed while it is asked (whether or not the sleep started yet, the answer is the same).
    const asked = run('sleep', ['30']);
    process.kill(helper, 'SIGKILL');
    const failed = await asked;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/process helper ended/);
    expect(liveSpawner()).toBeNull();
    expect(await starter()).toBe(process.pid);
    second();
  });

  it.each([
    ['lets go', 'release();'],
    ['never lets go', ''],
  ])('keeps no process from ending: a script that holds it, runs a program and %s exits by itself', (_, end) => {
    const script = [
      `import { holdSpawner } from ${JSON.stringify(join(import.meta.dirname, '../../dist/core/process/spawner.js'))};`,
      `import { run } from ${JSON.stringify(join(import.meta.dirname, '../../dist/core/process/run.js'))};`,
      'const release = holdSpawner();',
      "const r = await run('sh', ['-c', 'echo $PPID']);",
      'console.log(r.stdout.trim() !== String(process.pid) ? "helped" : "direct");',
      end,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.error).toBeUndefined();
    expect(r.signal).toBeNull();
    expect(r.stdout.trim()).toBe('helped');
    expect(r.status).toBe(0);
  });
});
