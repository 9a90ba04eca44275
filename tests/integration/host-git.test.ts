import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createBundle } from '../../core/git/bundle-create.js';
import { BundleImportError, type ImportBundleOptions, importBundle } from '../../core/git/bundle-import.js';
import {
  diffNumstat,
  diffSummary,
  hostGit,
  push,
  recentCommits,
  remotesContaining,
  statusPorcelain,
  switchNewBranch,
} from '../../core/git/host-git.js';
import { bundleHeadsOf } from '../../core/git/pack-scan.js';
import { agentWork, git, gitCode, HOOK_DIRS, makeWorld, marks, refsOf, type World } from './host-git-world.js';

describe.each(HOOK_DIRS)('host git runs no hook from %s', (active) => {
  let w: World;
  beforeEach(() => {
    w = makeWorld(active);
  });

  it('control: plain git runs the hooks in this setup', () => {
    git(w.work, 'commit', '-q', '--allow-empty', '-m', 'plain');
    expect(marks(w).length).toBeGreaterThan(0);
  });

  it('fast-forwards the ticket branch from a bundle', async () => {
    const { bundle, tip } = agentWork(w);
    const r = await importBundle({
      cwd: w.work,
      bundle,
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
    });
    expect(r).toEqual({ tip, ref: 'refs/heads/chalk/SHOP-1' });
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(w.work, 'status', '--porcelain')).toBe('');
    expect(git(w.work, 'for-each-ref', 'refs/chalk/')).toBe('');
    expect(marks(w)).toEqual([]);
  });

  it('parks a bundle on a new detention branch', async () => {
    const { bundle, tip } = agentWork(w);
    const target = { kind: 'branch', name: 'detention/SHOP-1-100' } as const;
    const r = await importBundle({ cwd: w.work, bundle, base: w.base, target });
    expect(r).toEqual({ tip, ref: 'refs/heads/detention/SHOP-1-100' });
    expect(git(w.work, 'rev-parse', 'detention/SHOP-1-100')).toBe(tip);
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(w.base);
    expect(git(w.work, 'for-each-ref', 'refs/chalk/')).toBe('');
    expect(marks(w)).toEqual([]);
  });

  it('pushes to a local bare origin without pre-push', async () => {
    const r = await push(w.work, { remote: 'origin', branch: 'chalk/SHOP-1', setUpstream: true });
    expect(r.code).toBe(0);
    expect(git(w.origin, 'rev-parse', 'refs/heads/chalk/SHOP-1')).toBe(w.base);
    expect(marks(w)).toEqual([]);
  });

  it("switches to office hours' new tutoring branch without post-checkout", async () => {
    await switchNewBranch(w.work, 'tutoring/SHOP-1-100');
    expect(git(w.work, 'symbolic-ref', '--short', 'HEAD')).toBe('tutoring/SHOP-1-100');
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(w.base);
    await expect(switchNewBranch(w.work, 'tutoring/SHOP-1-100')).rejects.toThrow(/git switch failed/);
    await expect(switchNewBranch(w.work, '--orphan')).rejects.toThrow(/not a valid branch/);
    expect(marks(w)).toEqual([]);
  });

  it('writes a bundle of the branch', async () => {
    const out = join(w.dir, 'clone-me.bundle');
    const r = await createBundle({ cwd: w.work, ref: 'chalk/SHOP-1', out });
    expect(r).toEqual({ out, head: w.base, ref: 'refs/heads/chalk/SHOP-1', shallow: [] });
    expect(git(w.dir, 'bundle', 'list-heads', out)).toBe(`${w.base} refs/heads/chalk/SHOP-1`);
    expect(marks(w)).toEqual([]);
  });
});

describe('host git runs no fsmonitor and no textconv', () => {
  it('status --porcelain with a core.fsmonitor program in the tree', async () => {
    const w = makeWorld('.git/hooks');
    const mon = join(w.work, '.husky', 'fsmon');
    writeFileSync(mon, `#!/bin/sh\ntouch '${w.sentinels}/fsmonitor'\nexit 1\n`);
    chmodSync(mon, 0o755);
    git(w.work, 'add', '-A');
    git(w.work, 'commit', '-q', '--no-verify', '-m', 'fsmonitor');
    git(w.work, 'config', 'core.fsmonitor', mon);
    spawnSync('rm', ['-f', ...readdirSync(w.sentinels).map((f) => join(w.sentinels, f))]);
    expect(await statusPorcelain(w.work)).toEqual([]);
    expect(marks(w)).toEqual([]);
    git(w.work, 'status', '--porcelain');
    expect(marks(w)).toEqual(['fsmonitor']);
  });

  it('diff with a textconv driver named by .gitattributes and an external diff', async () => {
    const w = makeWorld('.git/hooks');
    writeFileSync(join(w.work, '.gitattributes'), '*.txt diff=sneaky\n');
    git(w.work, 'add', '-A');
    git(w.work, 'commit', '-q', '--no-verify', '-m', 'attributes');
    const from = git(w.work, 'rev-parse', 'HEAD');
    writeFileSync(join(w.work, 'app.txt'), 'one\ntwo\n');
    git(w.work, 'commit', '-q', '--no-verify', '-am', 'two');
    git(w.work, 'config', 'diff.sneaky.textconv', `sh -c 'touch ${w.sentinels}/textconv; cat "$0"'`);
    git(w.work, 'config', 'diff.external', `sh -c 'touch ${w.sentinels}/external'`);
    spawnSync('rm', ['-f', ...readdirSync(w.sentinels).map((f) => join(w.sentinels, f))]);
    expect(await diffNumstat(w.work, { from, to: 'HEAD' })).toEqual([{ path: 'app.txt', added: 1, deleted: 0 }]);
    expect((await hostGit(['diff', from, 'HEAD'], { cwd: w.work })).stdout).toContain('+two');
    expect((await hostGit(['log', '-p', '-1'], { cwd: w.work })).stdout).toContain('+two');
    // Office hours' description of a fix: the same rules, the diff cut at maxLines.
    expect(await diffSummary(w.work, { from, to: 'HEAD', maxLines: 3 })).toEqual({
      stat: expect.stringContaining('app.txt | 1 +'),
      diff: expect.stringMatching(/^diff --git a\/app.txt b\/app.txt\n.*\n.*$/),
      lines: 7,
    });
    expect((await recentCommits(w.work, { rev: 'HEAD', max: 2 })).map((c) => c.subject)).toEqual(['two', 'attributes']);
    expect(await remotesContaining(w.work, 'HEAD')).toEqual([]);
    expect(marks(w)).toEqual([]);
    git(w.work, 'diff', from, 'HEAD');
    git(w.work, 'diff', '--no-ext-diff', from, 'HEAD');
    expect(marks(w)).toEqual(['external', 'textconv']);
  });
});

describe('createBundle', () => {
  it('refuses to write through an existing symlink or over a file', async () => {
    const w = makeWorld('.husky');
    const victim = join(w.dir, 'victim');
    writeFileSync(victim, 'keep me\n');
    const link = join(w.dir, 'link.bundle');
    symlinkSync(victim, link);
    await expect(createBundle({ cwd: w.work, ref: 'chalk/SHOP-1', out: link })).rejects.toThrow(/already exists/);
    const dangling = join(w.dir, 'dangling.bundle');
    symlinkSync(join(w.dir, 'nowhere'), dangling);
    await expect(createBundle({ cwd: w.work, ref: 'chalk/SHOP-1', out: dangling })).rejects.toThrow(/already exists/);
    expect(existsSync(join(w.dir, 'nowhere'))).toBe(false);
    await expect(createBundle({ cwd: w.work, ref: 'chalk/SHOP-1', out: victim })).rejects.toThrow(/already exists/);
    expect(spawnSync('cat', [victim], { encoding: 'utf8' }).stdout).toBe('keep me\n');
    expect(readdirSync(w.dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});

describe('importBundle waits for ready', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
  });

  it('reads the bundle only once ready resolves: a bundle written after the import began comes home', async () => {
    const bundle = join(w.dir, 'later.bundle');
    let write: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      write = () => {
        const made = agentWork(w, 'made.bundle');
        writeFileSync(bundle, readFileSync(made.bundle));
        resolve();
      };
    });
    const home = importBundle({
      cwd: w.work,
      bundle,
      ready,
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(bundle)).toBe(false);
    write();
    const r = await home;
    expect(r.tip).toBe(git(w.sandbox, 'rev-parse', 'HEAD'));
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(r.tip);
    expect(marks(w)).toEqual([]);
  });

  it("rejects with ready's own error, importing nothing, when ready rejects", async () => {
    const { bundle } = agentWork(w);
    const before = refsOf(w);
    const why = new Error('the sandbox could not export');
    const err = await importBundle({
      cwd: w.work,
      bundle,
      ready: Promise.reject(why),
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
    }).catch((e: unknown) => e);
    expect(err).toBe(why);
    expect(refsOf(w)).toEqual(before);
    expect(git(w.work, 'for-each-ref', 'refs/chalk/')).toBe('');
  });
});

describe('importBundle refuses', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
  });

  /** Imports and expects a refusal that leaves the refs as they were and no hook run. */
  async function refused(o: Partial<ImportBundleOptions> & { bundle: string }, message: RegExp): Promise<void> {
    const before = refsOf(w);
    const target = o.target ?? { kind: 'fast-forward', branch: 'chalk/SHOP-1' };
    const err = await importBundle({ cwd: w.work, base: w.base, ...o, target }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BundleImportError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
    expect(refsOf(w)).toEqual(before);
    expect(marks(w)).toEqual([]);
  }

  it("a symlink to another repository's bundle", async () => {
    const bundle = join(w.dir, 'out.bundle');
    symlinkSync(w.other.bundle, bundle);
    await refused({ bundle }, /^the sandbox's bundle is a symlink$/);
    expect(gitCode(w.work, 'cat-file', '-e', w.other.commit)).not.toBe(0);
  });

  it("a symlink to another repository's directory", async () => {
    const bundle = join(w.dir, 'out.bundle');
    symlinkSync(join(w.other.dir, '.git'), bundle);
    await refused({ bundle }, /^the sandbox's bundle is a symlink$/);
  });

  it('a FIFO', async () => {
    const bundle = join(w.dir, 'out.bundle');
    expect(spawnSync('mkfifo', [bundle]).status).toBe(0);
    await refused({ bundle }, /^the sandbox's bundle is a FIFO$/);
  });

  it('a directory', async () => {
    const bundle = join(w.dir, 'out.bundle');
    mkdirSync(bundle);
    await refused({ bundle }, /^the sandbox's bundle is a directory$/);
  });

  it('a missing file', async () => {
    await refused({ bundle: join(w.dir, 'never-written.bundle') }, /^the sandbox's bundle is missing$/);
  });

  it('a file over the cap', async () => {
    const { bundle } = agentWork(w);
    await refused({ bundle, maxBytes: 64 }, /^the sandbox's bundle is [0-9]+ bytes, over the 64-byte cap$/);
  });

  it('a corrupt bundle', async () => {
    const bundle = join(w.dir, 'out.bundle');
    writeFileSync(bundle, '# v2 git bundle\nnot really\n\x00\x01garbage');
    await refused({ bundle }, /^the sandbox's bundle does not verify/);
  });

  it('a bundle with two heads', async () => {
    agentWork(w);
    git(w.sandbox, 'branch', 'side');
    const bundle = join(w.dir, 'two.bundle');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`, `${w.base}..side`, 'chalk/SHOP-1');
    expect(git(w.dir, 'bundle', 'list-heads', bundle).split('\n').length).toBeGreaterThan(1);
    await refused({ bundle }, /^the sandbox's bundle has [2-9] heads \(expected exactly one\)$/);
  });

  it("another repository's history, leaving none of its objects in the store", async () => {
    await refused(
      { bundle: w.other.bundle, head: 'refs/heads/main' },
      new RegExp(
        `^the sandbox's bundle's tip ${w.other.commit.slice(0, 12)} does not descend from ${w.base.slice(0, 12)}$`,
      ),
    );
    expect(gitCode(w.work, 'cat-file', '-e', w.other.commit)).not.toBe(0);
    expect(gitCode(w.work, 'cat-file', '-e', w.other.blob)).not.toBe(0);
    await refused(
      { bundle: w.other.bundle, head: 'refs/heads/main', target: { kind: 'branch', name: 'detention/SHOP-1-1' } },
      /does not descend from/,
    );
    expect(gitCode(w.work, 'cat-file', '-e', w.other.commit)).not.toBe(0);
  });

  it('a worktree whose HEAD moved since the sandbox started', async () => {
    const { bundle } = agentWork(w);
    git(w.work, 'commit', '-q', '--no-verify', '--allow-empty', '-m', 'the person kept working');
    spawnSync('rm', ['-f', ...readdirSync(w.sentinels).map((f) => join(w.sentinels, f))]);
    await refused({ bundle }, /^chalk\/SHOP-1 moved to [0-9a-f]{12} while the sandbox worked from [0-9a-f]{12}$/);
  });

  it('a detention branch that already exists', async () => {
    const { bundle } = agentWork(w);
    git(w.work, 'update-ref', 'refs/heads/detention/SHOP-1-5', w.base);
    spawnSync('rm', ['-f', ...readdirSync(w.sentinels).map((f) => join(w.sentinels, f))]);
    await refused(
      { bundle, target: { kind: 'branch', name: 'detention/SHOP-1-5' } },
      /^branch detention\/SHOP-1-5 already exists$/,
    );
  });

  it('what inspect objects to, after the tip is in the store and before any ref moves', async () => {
    const { bundle, tip } = agentWork(w);
    const seen: [string, readonly string[] | null][] = [];
    const inspect = async (t: string, changed: readonly string[] | null) => {
      seen.push([t, changed]);
      expect(gitCode(w.work, 'cat-file', '-e', `${t}^{commit}`)).toBe(0);
      return 'the loop changed .chalk/config';
    };
    await refused({ bundle, inspect }, /^the loop changed \.chalk\/config$/);
    // What the tip changes, as read for the fast-forward: the guard needs no diff of its own.
    expect(seen).toEqual([[tip, ['app.txt']]]);
    expect(git(w.work, 'for-each-ref', 'refs/chalk/')).toBe('');
    const r = await importBundle({
      cwd: w.work,
      bundle,
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
      inspect: async () => null,
    });
    expect(r.tip).toBe(tip);
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(tip);
  });

  it('a target outside detention/', async () => {
    const { bundle } = agentWork(w);
    await refused({ bundle, target: { kind: 'branch', name: 'main' } }, /detention\/\.\.\. branch, not 'main'/);
  });
});

describe('bundleHeadsOf reads the heads git bundle list-heads prints', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
  });

  const listed = (bundle: string) =>
    git(w.dir, 'bundle', 'list-heads', bundle)
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ sha: l.slice(0, l.indexOf(' ')), name: l.slice(l.indexOf(' ') + 1) }));

  it.each(['2', '3'])('of a v%s bundle with a prerequisite and two heads', async (version) => {
    agentWork(w);
    git(w.sandbox, 'branch', 'side');
    const bundle = join(w.dir, `v${version}.bundle`);
    git(w.sandbox, 'bundle', 'create', '-q', `--version=${version}`, bundle, `${w.base}..HEAD`, `${w.base}..side`);
    expect(readFileSync(bundle).subarray(0, 15).toString()).toBe(`# v${version} git bundle`);
    expect(await bundleHeadsOf(bundle)).toEqual(listed(bundle));
  });

  it.each([
    ['no blank line after the header', '# v2 git bundle\n'.padEnd(70000, 'x')],
    ['another signature', '# v9 git bundle\n\n'],
    ['a head without a name', `# v2 git bundle\n${'a'.repeat(40)}\n\n`],
    ['a short object id', '# v2 git bundle\nabc refs/heads/x\n\n'],
    ['a capability in a v2 bundle', '# v2 git bundle\n@object-format=sha1\n\n'],
    ['a prerequisite without an id', '# v2 git bundle\n-zz\n\n'],
  ])('null for %s', async (_what, text) => {
    const bundle = join(w.dir, 'bad.bundle');
    writeFileSync(bundle, text);
    expect(await bundleHeadsOf(bundle)).toBeNull();
  });
});
