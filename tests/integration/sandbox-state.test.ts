import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETUP_CACHE_DIRS } from '../../core/config/keys.js';
import type { SandboxSession } from '../../core/ports/sandbox.js';
import { dockerReachable, makeTestRepo, type TestRepo, testSandbox } from './sandbox-helpers.js';

/**
 * A setup's state saved from one real sandbox and restored into the next: through the
 * engine's exec streams only, as an archive the host never unpacks, capped while it is
 * taken; what the archive holds comes back as it was (links stay links, FIFOs stay FIFOs)
 * and never over what the fresh clone has.
 */
const available = await dockerReachable();

/** What a hostile setup leaves: dependencies at two depths, a link and a FIFO among them, a home cache, a tracked vendor/. */
const SETUP = [
  'mkdir -p node_modules/left packages/app/node_modules/right ~/.cache/tool vendor/lib',
  'echo orig > node_modules/left/index.js',
  'echo right > packages/app/node_modules/right/index.js',
  'ln -s /etc/passwd node_modules/passwd-link',
  'ln -s /chalk node_modules/chalk-link',
  'mkfifo node_modules/fifo',
  'echo cached > ~/.cache/tool/blob',
  'echo changed-by-setup > vendor/lib/tracked.txt',
  'echo untracked > vendor/lib/new.txt',
  'echo "[user]" >> ~/.gitconfig',
].join(' && ');

describe.skipIf(!available)('saved setup state on the real engine', { timeout: 180_000 }, () => {
  let repo: TestRepo;
  let first: SandboxSession;
  const sandbox = testSandbox({ handleSignals: false, memoryMb: 512, cpus: 1 });

  beforeAll(async () => {
    await sandbox.ensureImage();
    repo = makeTestRepo('STA-1');
    // A tracked vendor/ and a tracked file the restore must not overwrite.
    writeFileSync(join(repo.root, 'notes.txt'), 'tracked\n');
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'tracked files');
    repo.git('checkout', '-q', '-b', 'vendored');
    first = await sandbox.open(repo.spec({ branch: repo.branch }));
    await first.clone();
  });

  afterAll(async () => {
    await first?.stop();
    repo?.dispose();
  });

  it('keeps the dependency directories and the home directory, and restores them as they were', async () => {
    await first.exec(
      'mkdir -p vendor/lib && echo tracked > vendor/lib/tracked.txt && git add -A && git commit -qm vendor',
    );
    const setup = await first.exec(SETUP);
    expect(setup.exitCode, setup.stderr).toBe(0);
    const dest = join(repo.ioDir, 'state.tar');
    const saved = await first.saveState?.(dest, { dirs: SETUP_CACHE_DIRS, maxBytes: 64 * 1024 * 1024 });
    expect(saved).toMatchObject({ saved: true });
    expect(lstatSync(dest).size).toBe(saved?.saved ? saved.bytes : -1);
    // The host kept bytes; it never unpacked them: no link or FIFO appeared beside the archive.
    expect(existsSync(join(repo.ioDir, 'node_modules'))).toBe(false);

    const second = await sandbox.open(repo.spec({ suffix: 'next' }));
    try {
      await second.clone();
      await second.exec('mkdir -p node_modules/left && echo mine > node_modules/left/index.js');
      await second.restoreState?.(dest);
      const look = await second.exec(
        [
          'cat node_modules/left/index.js packages/app/node_modules/right/index.js ~/.cache/tool/blob',
          'readlink node_modules/passwd-link node_modules/chalk-link',
          'stat -c %F node_modules/fifo',
          'ls vendor 2>&1 || true',
          'git config --global user.email',
          'cat notes.txt',
        ].join(' && '),
      );
      expect(look.exitCode, look.stderr).toBe(0);
      expect(look.stdout.split('\n')).toEqual([
        // The file the clone already had wins over the archive's.
        'mine',
        'right',
        'cached',
        '/etc/passwd',
        '/chalk',
        'fifo',
        // vendor/ is tracked on the branch the state was saved from, so it was not kept.
        "ls: cannot access 'vendor': No such file or directory",
        // The git identity is the new clone's, never the saved one's.
        'host@example.com',
        'tracked',
        '',
      ]);
      // The system prompt's directory stays root's: the restore wrote nothing there.
      expect((await second.exec('stat -c %U /chalk')).stdout.trim()).toBe('root');
    } finally {
      await second.stop();
    }
  });

  it('stops a state over its cap while it streams, and leaves nothing behind', async () => {
    await first.exec('head -c 3000000 /dev/urandom > node_modules/big.bin');
    const dest = join(repo.ioDir, 'capped.tar');
    const saved = await first.saveState?.(dest, { dirs: ['node_modules'], maxBytes: 1024 * 1024 });
    expect(saved).toEqual({ saved: false, why: 'it is over the cap of 1 MiB (CHALK_SETUP_CACHE_MB)' });
    expect(existsSync(dest)).toBe(false);
  });

  it('never writes through a link planted where the archive goes', async () => {
    const target = join(repo.ioDir, 'victim.txt');
    writeFileSync(target, 'victim\n');
    const dest = join(repo.ioDir, 'planted.tar');
    symlinkSync(target, dest);
    await expect(first.saveState?.(dest, { dirs: ['node_modules'], maxBytes: 1024 * 1024 })).rejects.toThrow(/EEXIST/);
    expect(readFileSync(target, 'utf8')).toBe('victim\n');
  });
});
