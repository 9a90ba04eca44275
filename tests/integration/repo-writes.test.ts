import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * Every write Chalk makes into a repository or a worktree, played by a hostile repository
 * through the real CLI and real git: a committed `CLAUDE.md -> ../../.bashrc`, a `.chalk`,
 * `.github`, `.gitlab-ci.yml`, `specs` or `.chalk/prompts` that is a link to somewhere else,
 * dangling or not. `chalk init`, `chalk prompts eject`, `chalk new` and `chalk fleet` refuse
 * with one line naming the file, write nothing through the link, and leave nothing behind.
 */

let repo: string;
/** The person's home, where the links point. */
let home: string;
let env: Record<string, string>;
const PROFILE = '# the person’s shell profile\nexport PATH=$HOME/bin:$PATH\n';

const git = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
};
const commit = () => {
  git('add', '-A');
  git('commit', '-q', '-m', 'planted');
};
const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0];
};
/** Every entry under `dir` with its content, so a test can say nothing was added or changed there. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) for (const [k, v] of Object.entries(snapshot(p))) out[`${name}/${k}`] = v;
    else out[name] = st.isFile() ? readFileSync(p, 'utf8') : `link ${st.size}`;
  }
  return out;
}

beforeEach(() => {
  repo = scratchRepo();
  home = tempDir('chalk-home-');
  writeFileSync(join(home, '.bashrc'), PROFILE);
  mkdirSync(join(home, 'elsewhere'));
  env = { XDG_STATE_HOME: join(tempDir(), 'state'), HOME: home };
});

describe('chalk init', () => {
  const cases: [string, () => void, RegExp][] = [
    [
      'CLAUDE.md linked to the shell profile',
      () => symlinkSync(join(home, '.bashrc'), join(repo, 'CLAUDE.md')),
      /^chalk: CLAUDE\.md is a symbolic link, which Chalk does not follow; replace it with a regular file in the repository$/,
    ],
    [
      'CLAUDE.md a dangling link to a new file in the home',
      () => symlinkSync(join(home, '.profile_new'), join(repo, 'CLAUDE.md')),
      /^chalk: CLAUDE\.md is a symbolic link, which Chalk does not follow/,
    ],
    [
      '.chalk linked to another directory',
      () => symlinkSync(join(home, 'elsewhere'), join(repo, '.chalk')),
      /^chalk: \.chalk\/config: \.chalk is a symbolic link, which Chalk does not follow/,
    ],
    [
      '.github linked to another directory (the CI gate)',
      () => symlinkSync(join(home, 'elsewhere'), join(repo, '.github')),
      /^chalk: \.github\/workflows\/chalk\.yml: \.github is a symbolic link, which Chalk does not follow/,
    ],
    [
      'specs linked to another directory',
      () => symlinkSync(join(home, 'elsewhere'), join(repo, 'specs')),
      /^chalk: specs\/\.gitkeep: specs is a symbolic link, which Chalk does not follow/,
    ],
  ];
  test.each(cases)('refuses %s with one line and writes nothing through it', (_what, plant, line) => {
    git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    plant();
    commit();
    const before = snapshot(home);
    const r = chalk(['init'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(1);
    expect(oneLine(r.stderr)).toMatch(line);
    expect(snapshot(home)).toEqual(before);
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe(PROFILE);
  });

  test('refuses a linked .gitlab-ci.yml for a GitLab origin, and a CLAUDE.md that is a directory', () => {
    git('remote', 'add', 'origin', 'git@gitlab.example.com:acme/shop.git');
    symlinkSync(join(home, '.bashrc'), join(repo, '.gitlab-ci.yml'));
    commit();
    const before = snapshot(home);
    const r = chalk(['init'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^chalk: \.gitlab-ci\.yml is a symbolic link, which Chalk does not follow/);
    expect(snapshot(home)).toEqual(before);

    // The files init made before it stopped stay; CLAUDE.md is then a directory.
    spawnSync('rm', ['-f', join(repo, '.gitlab-ci.yml'), join(repo, 'CLAUDE.md')]);
    mkdirSync(join(repo, 'CLAUDE.md'));
    const dir = chalk(['init'], { cwd: repo, env });
    expect(dir.code).toBe(1);
    expect(oneLine(dir.stderr)).toBe(
      'chalk: CLAUDE.md is a directory; replace it with a regular file in the repository',
    );
  });

  test('still creates, keeps and appends to regular files, keeping their mode', () => {
    git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    writeFileSync(join(repo, 'CLAUDE.md'), '# Shop\n', { mode: 0o640 });
    const r = chalk(['init'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('  updated  CLAUDE.md');
    expect(readFileSync(join(repo, 'CLAUDE.md'), 'utf8')).toMatch(/^# Shop\n\n## Chalk agent rules/);
    expect(lstatSync(join(repo, 'CLAUDE.md')).mode & 0o777).toBe(0o640);
    expect(readdirSync(repo).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('chalk prompts eject', () => {
  test('refuses a .chalk/prompts linked elsewhere, and a dangling link at the prompt itself', () => {
    mkdirSync(join(repo, '.chalk'));
    symlinkSync(join(home, 'elsewhere'), join(repo, '.chalk', 'prompts'));
    commit();
    const r = chalk(['prompts', 'eject', 'system'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /^chalk: \.chalk\/prompts\/system\.md: \.chalk\/prompts is a symbolic link, which Chalk does not follow/,
    );
    expect(readdirSync(join(home, 'elsewhere'))).toEqual([]);

    spawnSync('rm', [join(repo, '.chalk', 'prompts')]);
    mkdirSync(join(repo, '.chalk', 'prompts'));
    symlinkSync(join(home, 'planted.md'), join(repo, '.chalk', 'prompts', 'review.md'));
    const dangling = chalk(['prompts', 'eject', 'review'], { cwd: repo, env });
    expect(dangling.code).toBe(1);
    expect(oneLine(dangling.stderr)).toMatch(/^chalk: \.chalk\/prompts\/review\.md is a symbolic link/);
    expect(existsSync(join(home, 'planted.md'))).toBe(false);
  });
});

describe('a committed specs link', () => {
  beforeEach(() => {
    symlinkSync(join(home, 'elsewhere'), join(repo, 'specs'));
    commit();
  });

  test('chalk new refuses with one line, writes no spec through it and leaves no worktree or branch', () => {
    const r = chalk(['new', 'SHOP-2', 'Add the basket'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /^chalk: specs\/SHOP-2\.md: specs is a symbolic link, which Chalk does not follow; replace it with a directory in the repository$/,
    );
    expect(readdirSync(join(home, 'elsewhere'))).toEqual([]);
    expect(existsSync(`${repo}.worktrees/SHOP-2`)).toBe(false);
    expect(git('branch', '--list', 'chalk/SHOP-2')).toBe('');
  });

  test('chalk fleet refuses the same way before anything starts', () => {
    const plan = join(tempDir(), 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({ workstreams: [{ ticket: 'SHOP-3', title: 'Add it', checkpoints: ['it works, with a test'] }] }),
    );
    const r = chalk(['fleet', 'SHOP-100', '--plan', plan, '--yes'], { cwd: repo, env });
    expect(r.code, r.stdout).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /^chalk: specs\/SHOP-3\.md: specs is a symbolic link, which Chalk does not follow/,
    );
    expect(readdirSync(join(home, 'elsewhere'))).toEqual([]);
    expect(git('branch', '--list', 'chalk/SHOP-3')).toBe('');
  });
});
