import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBundle } from '../../core/git/bundle-create.js';
import { importBundle } from '../../core/git/bundle-import.js';
import type { SandboxSpec } from '../../core/ports/sandbox.js';
import { TempSandbox } from '../../core/testing/index.js';
import { tempDir } from '../helpers/cli.js';

/**
 * Shallow history with real git and the sandbox's own scripts (clone, export,
 * commit; TempSandbox runs them): a `git clone --depth 1` worktree, as a CI
 * checkout is, starts a sandbox and takes its work back, and CHALK_CLONE_DEPTH
 * streams only the last commits of a long history.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

const dirs: string[] = [];
const sandbox = new TempSandbox();
afterEach(async () => {
  await sandbox.closeAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An origin with `commits` commits on main, each rewriting one file with 4 KiB that do not compress. */
function origin(commits: number): { dir: string; origin: string } {
  const dir = tempDir('chalk-shallow-');
  dirs.push(dir);
  const work = join(dir, 'seed');
  git(dir, 'init', '-q', '-b', 'main', work);
  for (let i = 0; i < commits; i++) {
    writeFileSync(join(work, 'f.txt'), randomBytes(2048).toString('hex'));
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', `c${i}`);
  }
  git(dir, 'clone', '-q', '--bare', work, 'origin.git');
  return { dir, origin: join(dir, 'origin.git') };
}

const spec = (o: { bundle: string; shallow: string[]; base: string }): SandboxSpec => ({
  repo: 'shop',
  source: o.bundle,
  ticket: 'SHA-1',
  runId: 'SHA-1-1',
  branch: 'chalk/SHA-1',
  baseBranch: { name: 'main', commit: o.base },
  author: { name: 'a', email: 'a@example.com' },
  ...(o.shallow.length > 0 ? { shallow: o.shallow } : {}),
});

describe('shallow history', () => {
  it('a --depth 1 checkout starts a sandbox, and its work comes home, even on the boundary commit itself', async () => {
    const { dir, origin: url } = origin(5);
    const root = join(dir, 'ci');
    git(dir, 'clone', '-q', '--depth', '1', `file://${url}`, root);
    const boundary = git(root, 'rev-parse', 'HEAD');
    // The ticket starts right on the boundary: the base whose parents are missing.
    git(root, 'checkout', '-q', '-b', 'chalk/SHA-1');
    const bundle = join(dir, 'in.bundle');
    const made = await createBundle({ cwd: root, ref: 'refs/heads/chalk/SHA-1', out: bundle });
    expect(made.shallow).toEqual([boundary]);

    // Without the boundary a clone fails the way CI checkouts did.
    const bare = join(dir, 'plain');
    expect(() => git(dir, 'clone', '-q', '--branch', 'chalk/SHA-1', bundle, bare)).toThrow(
      /did not send all necessary objects/,
    );

    const session = await sandbox.open(spec({ bundle, shallow: made.shallow, base: boundary }));
    expect(await session.clone()).toBe(boundary);
    expect((await session.exec('git rev-list --count HEAD && git rev-parse origin/main')).stdout.trim()).toBe(
      `1\n${boundary}`,
    );
    await session.exec('echo work > work.txt');
    const head = await session.commitAll('chalk(SHA-1): continue, loop 1');
    const out = join(dir, 'out.bundle');
    expect(await session.exportBundle(boundary, out)).toBe(head);
    const home = await importBundle({
      cwd: root,
      bundle: out,
      base: boundary,
      target: { kind: 'fast-forward', branch: 'chalk/SHA-1' },
    });
    expect(home.tip).toBe(head);
    expect(git(root, 'show', 'HEAD:work.txt')).toBe('work');
  });

  it('CHALK_CLONE_DEPTH: the ticket commits and that many below the base travel; origin/main is there for the review', async () => {
    const { dir, origin: url } = origin(40);
    const root = join(dir, 'full');
    git(dir, 'clone', '-q', url, root);
    const base = git(root, 'rev-parse', 'HEAD');
    git(root, 'checkout', '-q', '-b', 'chalk/SHA-1');
    for (const n of [1, 2]) {
      writeFileSync(join(root, `t${n}.txt`), `${n}\n`);
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '-m', `ticket ${n}`);
    }
    const full = await createBundle({ cwd: root, ref: 'refs/heads/chalk/SHA-1', out: join(dir, 'full.bundle') });
    expect(full.shallow).toEqual([]);
    const bundle = join(dir, 'depth.bundle');
    const made = await createBundle({ cwd: root, ref: 'refs/heads/chalk/SHA-1', out: bundle, depth: 5, keep: base });
    expect(made.shallow).toHaveLength(1);
    expect(made.head).toBe(full.head);
    expect(statSync(bundle).size).toBeLessThan(statSync(full.out).size / 3);

    const session = await sandbox.open(spec({ bundle, shallow: made.shallow, base }));
    await session.clone();
    const r = await session.exec(
      'git rev-list --count HEAD && git rev-parse origin/main && git log --format=%s -1 HEAD~6',
    );
    expect(r.stdout.trim().split('\n')).toEqual(['7', base, 'c35']);
    // The user's repository is untouched by the copy the bundle was made from.
    expect(git(root, 'rev-parse', '--is-shallow-repository')).toBe('false');
  });
});
