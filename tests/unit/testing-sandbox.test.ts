import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxFileError } from '../../core/ports/sandbox.js';
import { TempSandbox, type TempSandboxSession } from '../../core/testing/index.js';

/** The testing kernel's sandbox keeps the Sandbox port's rules (what the loop relies on), with no engine. */
describe('TempSandbox', () => {
  const sandbox = new TempSandbox();
  afterEach(() => sandbox.closeAll());

  const open = async () => {
    const s = (await sandbox.open({
      repo: 'shop-1',
      source: '/nonexistent.bundle',
      ticket: 'PROJ-1',
      runId: 'PROJ-1-1',
      branch: 'chalk/PROJ-1',
      author: { name: 'a', email: 'a@example.com' },
    })) as TempSandboxSession;
    mkdirSync(s.hostPath('.'), { recursive: true });
    return s;
  };

  it('reads a regular file under the cap; a missing one is null', async () => {
    const s = await open();
    writeFileSync(s.hostPath('a.txt'), 'hello');
    expect((await s.readFile('a.txt', { maxBytes: 5 }))?.toString()).toBe('hello');
    expect(await s.readFile('/work/repo/a.txt', { maxBytes: 5 })).not.toBeNull();
    expect(await s.readFile('missing.txt', { maxBytes: 5 })).toBeNull();
  });

  it('refuses a symlink, a FIFO, a directory and a file over the cap', async () => {
    const s = await open();
    writeFileSync(s.hostPath('big.txt'), 'x'.repeat(11));
    symlinkSync('/etc/hostname', s.hostPath('link'));
    execFileSync('mkfifo', [s.hostPath('fifo')]);
    mkdirSync(s.hostPath('dir'));
    await expect(s.readFile('big.txt', { maxBytes: 10 })).rejects.toThrow(/over 10/);
    await expect(s.readFile('link', { maxBytes: 10 })).rejects.toThrow(SandboxFileError);
    await expect(s.readFile('fifo', { maxBytes: 10 })).rejects.toThrow(/not a regular file/);
    await expect(s.readFile('dir', { maxBytes: 10 })).rejects.toThrow(/not a regular file/);
  });

  it('runs commands in the clone with its paths mapped, in a clean environment', async () => {
    const s = await open();
    process.env.CHALK_TESTING_SECRET = 'do-not-leak';
    try {
      const r = await s.exec('pwd; printenv CHALK_TESTING_SECRET || echo none; echo hi > /tmp/x; cat /tmp/x');
      expect(r.stdout.split('\n').slice(0, 3)).toEqual([s.hostPath('.'), 'none', 'hi']);
      expect(existsSync(join(s.root, 'tmp', 'x'))).toBe(true);
    } finally {
      delete process.env.CHALK_TESTING_SECRET;
    }
  });

  it('stops a command past its output cap or its timeout, and rejects on abort', async () => {
    const s = await open();
    const capped = await s.exec('yes | head -c 100000', { maxOutputBytes: 1000 });
    expect(capped.outputCapped).toBe(true);
    const slow = await s.exec('sleep 5', { timeoutMs: 50 });
    expect([slow.timedOut, slow.exitCode]).toEqual([true, 124]);
    const c = new AbortController();
    const p = s.exec('sleep 5', { signal: c.signal });
    c.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('sees in a tree id a file rewritten at its size within the second the index last recorded it', async () => {
    const s = await open();
    const git = 'git -c user.name=t -c user.email=t@example.com';
    // ctime off, so only what git compares without it decides: size, and mtime to the second.
    await s.exec(
      `git init -q . && git config core.trustctime false && printf -- '- [ ] a\\n' > spec.md && git add spec.md && ${git} commit -q -m spec`,
    );
    // The file's last write and the index in one second, then the same-size rewrite in that second.
    await s.exec(
      'touch -d @1700000000.1 spec.md && git update-index -q --refresh && touch -d @1700000000.5 .git/index',
    );
    const before = await s.treeId();
    await s.exec(`printf -- '- [x] a\\n' > spec.md && touch -d @1700000000.9 spec.md`);
    expect(await s.treeId()).not.toBe(before);
    expect((await s.exec('git cat-file -p "$(git write-tree)":spec.md')).stdout).toBe('- [ ] a\n');
  });

  it('gives the whole tree id and the one without the paths left out in one call, as the sandbox script does', async () => {
    const s = await open();
    const git = 'git -c user.name=t -c user.email=t@example.com';
    await s.exec(`git init -q . && echo a > a && git add a && ${git} commit -q -m a`);
    await s.exec('mkdir -p specs && echo n > specs/T-1.notes.md && echo r > report.xml');
    const both = await s.treeIds({ exclude: ['specs/*.notes.md'], unlessIgnored: ['report.xml'] });
    expect(both.whole).toBe(await s.treeId());
    expect(both.without).toBe(await s.treeId(['specs/*.notes.md', 'report.xml']));
    await s.exec('echo report.xml > .gitignore');
    const ignored = await s.treeIds({ exclude: ['specs/*.notes.md'], unlessIgnored: ['report.xml'] });
    expect(ignored.without).toBe(await s.treeId(['specs/*.notes.md']));
    expect(ignored.without).not.toBe(ignored.whole);
  });

  it('puts only plain names into /chalk, and removes everything when stopped', async () => {
    const s = await open();
    await s.putFile('system.md', 'be good');
    expect((await s.readFile('/chalk/system.md', { maxBytes: 100 }))?.toString()).toBe('be good');
    await expect(s.putFile('../escape', 'x')).rejects.toThrow(/not a file name/);
    await s.stop();
    expect(existsSync(s.root)).toBe(false);
    expect(sandbox.openSessions()).toEqual([]);
  });
});
