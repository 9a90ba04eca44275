import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runPaths } from '../../core/layout.js';
import { repoKey } from '../../core/repo/git.js';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * Text and names a repository controls, met through the built CLI: control
 * characters never reach the terminal, a spec without checkpoints and a title
 * with a newline are refused in one line, and two repositories whose checkouts
 * share a folder name are two repositories.
 */

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** Anything a terminal would act on: C0 controls but tab and newline, DEL, C1 controls. */
const controls = (s: string) =>
  [...s].filter((c) => {
    const cp = c.codePointAt(0) ?? 0;
    return (cp < 0x20 && c !== '\t' && c !== '\n') || (cp >= 0x7f && cp <= 0x9f);
  });

/** A database chalk status cannot reach, so it answers at once from the run directories. */
const noDatabase = (state: string) => ({
  XDG_STATE_HOME: state,
  CHALK_DATABASE_URL: 'postgresql://chalk@127.0.0.1:1/none',
  CHALK_DB_TIMEOUT: '2',
});

describe('control characters from the repository', () => {
  test('a .chalk/config value full of escape sequences is refused in one line with none of them', () => {
    const repo = scratchRepo();
    mkdirSync(join(repo, '.chalk'));
    writeFileSync(
      join(repo, '.chalk', 'config'),
      'CHALK_FORGE=\u001b]0;pwned\u0007\u001b[2J\u001b[1Agithub\rnone\u009b8m\n',
    );
    const r = chalk(['config'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(controls(r.stderr)).toEqual([]);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(
      /^chalk: CHALK_FORGE must be 'auto' or a forge's name, like 'github', 'gitlab' or 'none' \(got 'githubnone'\)/,
    );
  });

  test('a repository folder name with escape sequences reaches no terminal raw', () => {
    const dir = tempDir();
    const repo = join(dir, 'shop\u001b]0;owned\u0007\u001b[2J');
    mkdirSync(join(repo, 'specs'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'chalk/SHOP-1');
    writeFileSync(join(repo, 'specs', 'SHOP-1.md'), '# SHOP-1: x\n- [ ] one\n');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'spec');
    writeFileSync(join(repo, 'wip.txt'), 'not committed\n');
    const r = chalk(['run'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(controls(r.stderr)).toEqual([]);
    expect(r.stderr).toBe(
      `chalk: uncommitted changes in ${join(dir, 'shop')}; commit them first (the sandbox only sees commits)\n`,
    );
  });
});

describe('a spec with no checkpoint', () => {
  const specs: [string, string][] = [
    ['no list at all', '# SHOP-3: Basket\n\n## Context\nJust words.\n'],
    ['boxes only in a code fence', '# SHOP-3: Basket\n\n```md\n- [ ] an example\n```\n'],
    ['boxes only in an HTML comment', '# SHOP-3: Basket\n\n<!--\n- [ ] hidden\n* [x] hidden\n-->\n'],
  ];

  test.each(specs)('is refused by chalk run and chalk check before any call: %s', (_name, spec) => {
    const repo = scratchRepo();
    const state = tempDir('chalk-state-');
    git(repo, 'checkout', '-q', '-b', 'chalk/SHOP-3');
    mkdirSync(join(repo, 'specs'));
    writeFileSync(join(repo, 'specs', 'SHOP-3.md'), spec);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'spec');
    // Everything else a run needs is there, so the checkpoints are what is refused.
    const env = { ...noDatabase(state), CHALK_TEST_CMD: 'true', ANTHROPIC_API_KEY: 'sk-test-not-used' };
    for (const command of ['run', 'check']) {
      const r = chalk([command], { cwd: repo, env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        "chalk: specs/SHOP-3.md has no checkpoints: add '- [ ] ...' lines, one per step, and commit it\n",
      );
    }
    // Nothing was claimed or started: no run directory.
    expect(existsSync(join(state, 'chalk'))).toBe(false);
  });
});

describe('chalk new and the title', () => {
  test.each([
    ['a newline', ['Add', 'the\nbasket']],
    ['a trailing newline', ['Add the basket\n']],
    ['a tab', ['Add\tthe basket']],
    ['an escape sequence', ['Add \u001b[2J the basket']],
    ['a carriage return', ['Add\rthe basket']],
  ])('refuses a title with %s in one line, creating nothing', (_name, words) => {
    const repo = scratchRepo('shop');
    const r = chalk(['new', 'SHOP-7', ...words], { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'chalk: the title must be one line without control characters (no newline or tab); retype it\n',
    );
    expect(existsSync(`${repo}.worktrees`)).toBe(false);
    expect(git(repo, 'branch', '--format=%(refname:short)')).toBe('main');
  });
});

describe('repository identity', () => {
  /** Two repositories whose main checkouts are both called `shop`. */
  const twoShops = () => {
    const root = tempDir();
    const shops = ['a', 'b'].map((d) => {
      const repo = join(root, d, 'shop');
      mkdirSync(repo, { recursive: true });
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, '-c', 'user.name=T', '-c', 'user.email=t@e', 'commit', '-q', '--allow-empty', '-m', 'start');
      return repo;
    });
    return { root, a: shops[0] as string, b: shops[1] as string };
  };

  const sha8 = (path: string) => createHash('sha256').update(realpathSync(path)).digest('hex').slice(0, 8);

  test('the key is the folder name and 8 hex of the real path, the same from a worktree or a symlink', () => {
    const { root, a, b } = twoShops();
    expect(repoKey(a)).toBe(`shop-${sha8(a)}`);
    expect(repoKey(b)).toBe(`shop-${sha8(b)}`);
    expect(repoKey(a)).not.toBe(repoKey(b));
    symlinkSync(a, join(root, 'link'));
    expect(repoKey(join(root, 'link'))).toBe(repoKey(a));
    // A linked worktree reports its repository's key.
    git(a, 'worktree', 'add', '-q', '-b', 'chalk/SHOP-1', join(root, 'wt'));
    const state = tempDir('chalk-state-');
    const fromWorktree = chalk(['status', '--json'], { cwd: join(root, 'wt'), env: noDatabase(state) });
    expect(JSON.parse(fromWorktree.stdout).repo).toBe(repoKey(a));
  });

  test('a/shop and b/shop share no state: chalk status of one never lists the other', () => {
    const { a, b } = twoShops();
    const state = tempDir('chalk-state-');
    const env = noDatabase(state);
    // A run of SHOP-1 left its directory in a/shop's state.
    const paths = runPaths(repoKey(a), 'SHOP-1', { XDG_STATE_HOME: state });
    mkdirSync(paths.dir, { recursive: true });

    const statusA = chalk(['status', '--json'], { cwd: a, env });
    const statusB = chalk(['status', '--json'], { cwd: b, env });
    expect(statusA.code, statusA.stderr).toBe(0);
    expect(statusB.code, statusB.stderr).toBe(0);
    const ra = JSON.parse(statusA.stdout) as { repo: string; tickets: { ticket: string }[] };
    const rb = JSON.parse(statusB.stdout) as { repo: string; tickets: { ticket: string }[] };
    expect(ra.repo).toBe(`shop-${sha8(a)}`);
    expect(rb.repo).toBe(`shop-${sha8(b)}`);
    expect(ra.tickets.map((t) => t.ticket)).toEqual(['SHOP-1']);
    expect(rb.tickets).toEqual([]);
    // Each state directory is its own, and none is the bare folder name; beside them only the
    // machine's code cache of the status bundle (a repository's key ends in -<8 hex>, so never
    // names it).
    expect(readdirSync(join(state, 'chalk')).sort()).toEqual(['code-cache', ra.repo]);
    expect(paths.dir.startsWith(join(state, 'chalk', `shop-${sha8(a)}`, 'runs'))).toBe(true);
  });
});
