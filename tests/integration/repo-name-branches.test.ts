import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachRef } from '../../core/git/host-git.js';
import { repoName, repoNameAndBranches } from '../../core/repo/git.js';
import { scratchRepo, tempDir } from '../helpers/cli.js';

/** chalk status asks one git process for the repository's key and its detention branches. */
describe('repoNameAndBranches', () => {
  const git = (cwd: string, ...args: string[]) => {
    const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  };

  it('answers as repoName and for-each-ref do, from the main checkout and from a linked worktree', async () => {
    const repo = scratchRepo();
    git(repo, 'branch', 'detention/SHOP-2-1700000000');
    git(repo, 'branch', 'detention/SHOP-2-1700000100');
    git(repo, 'branch', 'detention/nested/SHOP-3-1700000200');
    git(repo, 'branch', 'detentions-not-these');
    git(repo, 'branch', 'chalk/SHOP-2');
    const worktree = join(tempDir(), 'wt');
    git(repo, 'worktree', 'add', '-q', worktree, '-b', 'chalk/SHOP-9');
    for (const cwd of [repo, worktree]) {
      const both = await repoNameAndBranches(cwd, 'detention/');
      expect(both.repo).toBe(await repoName(cwd));
      expect(both.branches.sort()).toEqual((await forEachRef(cwd, ['refs/heads/detention/'])).sort());
      expect(both.branches.sort()).toEqual([
        'detention/SHOP-2-1700000000',
        'detention/SHOP-2-1700000100',
        'detention/nested/SHOP-3-1700000200',
      ]);
    }
  });

  it('a repository with none, even one with no commit yet, has an empty list', async () => {
    const empty = join(tempDir(), 'empty');
    mkdirSync(empty);
    git(empty, 'init', '-q');
    expect(await repoNameAndBranches(empty, 'detention/')).toEqual({ repo: await repoName(empty), branches: [] });
  });

  it('outside a repository it fails as repoName does', async () => {
    const outside = tempDir();
    const why = await repoName(outside).catch((e: Error) => e.message);
    expect(why).toMatch(/^git rev-parse failed/);
    await expect(repoNameAndBranches(outside, 'detention/')).rejects.toThrow(why);
  });
});
