import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBundle } from '../../core/git/bundle-create.js';
import { MIRROR_REF, mirrorRepo } from '../../core/git/mirror-repo.js';
import { hostGitPort } from '../../core/git/port.js';
import type { HostGit } from '../../core/ports/host-git.js';
import type { Log } from '../../core/ports/log.js';
import type { MirrorRepo } from '../../core/ports/sandbox.js';
import { mirrorRepoOf } from '../../core/repo/git.js';
import { chooseMirror, MIRROR_STALE_BYTES } from '../../core/run/base/mirror.js';
import { tempDir } from '../helpers/cli.js';

/**
 * Sandbox mirrors on the host side, with real git: what a mirror repository holds (one commit's
 * history, nothing else of the repository), the thin bundle over it, and which mirror a start
 * uses (core/run/base/mirror.ts) against an engine's worth of mirrors kept in memory. The Docker
 * side is tests/integration/sandbox-mirror.test.ts; the attacker's, tests/e2e/hostile-mirror.test.ts.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  }).trim();

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SECRET = 'SECRET-never-in-a-sandbox';

/**
 * A repository with history on main, a second branch and a stash holding a secret, and the
 * ticket branch (two commits) checked out.
 */
function repo(): { dir: string; root: string; fork: string; secretBlob: string; git: (...a: string[]) => string } {
  const dir = tempDir('chalk-mirror-git-');
  dirs.push(dir);
  const root = join(dir, 'shop');
  git(dir, 'init', '-q', '-b', 'main', root);
  for (let i = 0; i < 5; i++) {
    writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`.repeat(100));
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', `main ${i}`);
  }
  const fork = git(root, 'rev-parse', 'HEAD');
  git(root, 'checkout', '-q', '-b', 'other');
  writeFileSync(join(root, 'secret.txt'), `${SECRET}\n`);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'a secret on another branch');
  const secretBlob = git(root, 'rev-parse', 'HEAD:secret.txt');
  git(root, 'checkout', '-q', 'main');
  writeFileSync(join(root, 'f0.txt'), `${SECRET} in a stash\n`);
  git(root, 'stash', '-q');
  git(root, 'checkout', '-q', '-b', 'chalk/MIR-1');
  for (const n of [1, 2]) {
    writeFileSync(join(root, `t${n}.txt`), `ticket ${n}\n`);
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', `ticket ${n}`);
  }
  return { dir, root, fork, secretBlob, git: (...a) => git(root, ...a) };
}

/** Every object a repository holds (packed or loose), sorted. */
const allObjects = (gitDir: string) =>
  git(gitDir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)').split('\n').sort();

/** Every object `rev` reaches in `root`, sorted. */
const reached = (root: string, rev: string) =>
  [...new Set(git(root, 'rev-list', '--objects', '--no-object-names', rev).split('\n'))].sort();

/** Mirrors kept in memory as an engine would: each made by running `fill` into a directory of its own. */
function engine() {
  const made: { repo: MirrorRepo; base: string; dir: string }[] = [];
  const lines: string[] = [];
  let fail: string | null = null;
  const sandbox = {
    mirrors: async () => [...made].reverse().map((m) => ({ repo: m.repo.key, base: m.base })),
    makeMirror: async (o: {
      repo: MirrorRepo;
      base: string;
      fill: (dir: string) => Promise<void>;
      onBuild?: (l: string) => void;
    }) => {
      if (fail) throw new Error(fail);
      if (made.some((m) => m.repo.key === o.repo.key && m.base === o.base)) return { built: false };
      const dir = join(tempDir('chalk-mirror-made-'), 'mirror.git');
      dirs.push(dir);
      o.onBuild?.(`making a mirror at ${o.base}`);
      await o.fill(dir);
      made.push({ repo: o.repo, base: o.base, dir });
      return { built: true };
    },
  };
  const log: Log = {
    info: (m) => lines.push(m),
    warn: (m) => lines.push(`warning: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
    debug: () => {},
    child: () => log,
  };
  return {
    made,
    lines,
    sandbox,
    log,
    failWith: (why: string) => {
      fail = why;
    },
  };
}

const choose = (
  e: ReturnType<typeof engine>,
  root: string,
  forkPoint: string | null,
  over: Partial<{ git: HostGit; depth: number }> = {},
) =>
  chooseMirror({
    git: over.git ?? hostGitPort,
    sandbox: e.sandbox,
    root,
    branch: 'chalk/MIR-1',
    forkPoint: Promise.resolve(forkPoint),
    depth: over.depth ?? 0,
    log: e.log,
  });

describe('a mirror repository', () => {
  it("holds exactly one commit's history: no other branch, stash or reflog, no hook or config of the user's, world-readable", async () => {
    const r = repo();
    const dir = join(r.dir, 'mirror.git');
    await mirrorRepo({ cwd: r.root, commit: r.fork, dir });
    expect(allObjects(dir)).toEqual(reached(r.root, r.fork));
    expect(allObjects(dir)).not.toContain(r.secretBlob);
    expect(allObjects(dir)).not.toContain(r.git('rev-parse', 'stash@{0}'));
    expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(`${MIRROR_REF} ${r.fork}`);
    expect(git(dir, 'cat-file', '-p', `${r.fork}:f1.txt`)).toContain('file 1');
    expect(readdirSync(dir).sort()).toEqual(['HEAD', 'config', 'objects', 'refs']);
    // The history's pack and the tree's (whole, for checkouts), the tree's read first (newer).
    const packs = readdirSync(join(dir, 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
    expect(packs).toHaveLength(2);
    const walk = (p: string) => {
      const st = statSync(p);
      expect(st.mode & 0o777, p).toBe(st.isDirectory() ? 0o755 : 0o444);
      if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    };
    walk(dir);
  });

  it('is refused in a shallow repository, whose history stops at its boundary', async () => {
    const r = repo();
    const shallow = join(r.dir, 'ci');
    git(r.dir, 'clone', '-q', '--depth', '1', `file://${r.root}`, shallow);
    await expect(
      mirrorRepo({ cwd: shallow, commit: git(shallow, 'rev-parse', 'HEAD'), dir: join(r.dir, 'm.git') }),
    ).rejects.toThrow(/shallow/);
  });
});

describe('the thin bundle over a mirror', () => {
  it("holds only the ticket's commits beyond the mirror's and fetches into a clone that borrows the mirror", async () => {
    const r = repo();
    const mirror = join(r.dir, 'mirror.git');
    await mirrorRepo({ cwd: r.root, commit: r.fork, dir: mirror });
    const out = join(r.dir, 'thin.bundle');
    const made = await createBundle({ cwd: r.root, ref: 'refs/heads/chalk/MIR-1', out, since: r.fork });
    expect(made.head).toBe(r.git('rev-parse', 'chalk/MIR-1'));
    expect(git(r.dir, 'bundle', 'list-heads', out)).toBe(`${made.head} refs/heads/chalk/MIR-1`);
    // Its one prerequisite is the mirror's commit.
    expect(execFileSync('head', ['-c', '200', out], { encoding: 'latin1' })).toContain(`-${r.fork}`);
    const clone = join(r.dir, 'clone');
    git(r.dir, 'init', '-q', '--initial-branch=chalk/MIR-1', clone);
    writeFileSync(join(clone, '.git', 'objects', 'info', 'alternates'), `${join(mirror, 'objects')}\n`);
    git(clone, 'fetch', '-q', '--update-head-ok', out, 'refs/heads/chalk/MIR-1:refs/heads/chalk/MIR-1');
    git(clone, 'reset', '-q', '--hard');
    expect(git(clone, 'rev-parse', 'HEAD')).toBe(made.head);
    expect(git(clone, 'fsck', '--connectivity-only', '--no-dangling')).toBe('');
    // What the clone can reach, its own and borrowed, is the ticket's history and nothing else.
    expect(allObjects(clone)).toEqual(reached(r.root, 'chalk/MIR-1'));
  });

  it("is the tip's commit over its parents when the ticket is at the mirror's commit", async () => {
    const r = repo();
    r.git('branch', '-q', 'chalk/MIR-2', r.fork);
    const out = join(r.dir, 'at.bundle');
    const made = await createBundle({ cwd: r.root, ref: 'refs/heads/chalk/MIR-2', out, since: r.fork });
    expect(made.head).toBe(r.fork);
    expect(git(r.dir, 'bundle', 'list-heads', out)).toBe(`${r.fork} refs/heads/chalk/MIR-2`);
  });

  it('is refused when the branch does not descend from the commit (a rewritten base)', async () => {
    const r = repo();
    const other = r.git('rev-parse', 'other');
    const out = join(r.dir, 'bad.bundle');
    await expect(createBundle({ cwd: r.root, ref: 'refs/heads/chalk/MIR-1', out, since: other })).rejects.toThrow(
      /does not descend from/,
    );
    expect(() => statSync(out)).toThrow();
    await expect(
      createBundle({ cwd: r.root, ref: 'refs/heads/chalk/MIR-1', out, since: '--upload-pack=touch /tmp/x' }),
    ).rejects.toThrow(/not an object id/);
  });
});

describe('which mirror a start uses', () => {
  it('makes one at the fork point when there is none, then uses it', async () => {
    const r = repo();
    const e = engine();
    const first = await choose(e, r.root, r.fork);
    expect(first).toMatchObject({ base: r.fork, built: true });
    expect(first?.repo).toEqual(mirrorRepoOf(git(r.root, 'rev-parse', '--path-format=absolute', '--git-common-dir')));
    expect(e.lines.filter((l) => /making/.test(l))).toHaveLength(1);
    expect(allObjects(e.made[0]?.dir as string)).not.toContain(r.secretBlob);
    const again = await choose(e, r.root, r.fork);
    expect(again).toMatchObject({ base: r.fork, built: false });
    expect(e.made).toHaveLength(1);
  });

  it("never uses a mirror of a commit outside the ticket's history (main rewritten since)", async () => {
    const r = repo();
    const e = engine();
    // A mirror made when main held a commit with a secret.
    r.git('checkout', '-q', 'main');
    writeFileSync(join(r.root, 'key.txt'), `${SECRET} pushed by mistake\n`);
    r.git('add', '-A');
    r.git('commit', '-q', '-m', 'oops');
    const leaked = r.git('rev-parse', 'HEAD');
    const leakedBlob = r.git('rev-parse', 'HEAD:key.txt');
    expect(await choose(e, r.root, leaked)).toMatchObject({ base: leaked, built: true });
    // main is rewritten without it; a new ticket starts from the new main.
    r.git('reset', '-q', '--hard', r.fork);
    writeFileSync(join(r.root, 'f4.txt'), 'rewritten\n');
    r.git('commit', '-q', '-am', 'main, rewritten');
    const fork = r.git('rev-parse', 'HEAD');
    r.git('checkout', '-q', '-B', 'chalk/MIR-1');
    const chosen = await choose(e, r.root, fork);
    expect(chosen).toMatchObject({ base: fork, built: true });
    expect(allObjects(e.made[1]?.dir as string)).not.toContain(leakedBlob);
    expect(allObjects(e.made[1]?.dir as string)).not.toContain(leaked);
  });

  it('uses an older mirror the base branch moved a little from, and makes a new one past MIRROR_STALE_BYTES', async () => {
    const r = repo();
    const e = engine();
    await choose(e, r.root, r.fork);
    // main moves a little: the old mirror still serves (the thin bundle carries the rest).
    r.git('checkout', '-q', 'main');
    writeFileSync(join(r.root, 'small.txt'), 'a little\n');
    r.git('add', '-A');
    r.git('commit', '-q', '-m', 'a little');
    const near = r.git('rev-parse', 'HEAD');
    r.git('checkout', '-q', '-B', 'chalk/MIR-1');
    expect(await choose(e, r.root, near)).toMatchObject({ base: r.fork, built: false });
    // main moves far (incompressible bytes past the bound): a new mirror at the fork point.
    r.git('checkout', '-q', 'main');
    writeFileSync(join(r.root, 'big.bin'), randomBytes(MIRROR_STALE_BYTES + 65536));
    r.git('add', '-A');
    r.git('commit', '-q', '-m', 'far');
    const far = r.git('rev-parse', 'HEAD');
    r.git('checkout', '-q', '-B', 'chalk/MIR-1');
    expect(await choose(e, r.root, far)).toMatchObject({ base: far, built: true });
  });

  it("never uses another repository's mirror, even of the same commit", async () => {
    const r = repo();
    const e = engine();
    await choose(e, r.root, r.fork);
    const copy = join(r.dir, 'copy');
    cpSync(r.root, copy, { recursive: true });
    const chosen = await choose(e, copy, r.fork);
    expect(chosen).toMatchObject({ base: r.fork, built: true });
    expect(chosen?.repo.key).not.toBe(e.made[0]?.repo.key);
    expect(chosen?.repo.root).toBe(copy);
  });

  it('makes none for CHALK_CLONE_DEPTH, a shallow repository, no fork point, or a sandbox without mirrors', async () => {
    const r = repo();
    const e = engine();
    expect(await choose(e, r.root, r.fork, { depth: 5 })).toBeNull();
    expect(await choose(e, r.root, null)).toBeNull();
    const shallow = join(r.dir, 'ci');
    git(r.dir, 'clone', '-q', '--depth', '1', `file://${r.root}`, shallow);
    expect(await choose(e, shallow, git(shallow, 'rev-parse', 'HEAD'))).toBeNull();
    expect(e.made).toEqual([]);
    const none = await chooseMirror({
      git: hostGitPort,
      sandbox: {},
      root: r.root,
      branch: 'chalk/MIR-1',
      forkPoint: Promise.resolve(r.fork),
      depth: 0,
      log: e.log,
    });
    expect(none).toBeNull();
  });

  it('a mirror that cannot be made costs one warning and the whole history, never the start', async () => {
    const r = repo();
    const e = engine();
    e.failWith('the engine is out of disk');
    expect(await choose(e, r.root, r.fork)).toBeNull();
    expect(e.lines).toEqual([
      'warning: no sandbox mirror for this start (the engine is out of disk); the sandbox gets the whole history',
    ]);
  });
});
