import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { chalk, scratchRepo } from '../helpers/cli.js';

const git = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' }).stdout.trim();

describe('chalk help, version and exit codes', () => {
  test('help prints the grouped usage on stdout and exits 0', () => {
    const r = chalk(['help'], { cwd: '/' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Setup$/m);
    expect(r.stdout).toMatch(/^Work$/m);
    expect(r.stdout).toContain('chalk init');
    expect(r.stdout).toContain(
      'chalk db up | down | status [--json] | url | psql | upgrade [--cleanup] | copy [--to-env NAME | --to URL]\n',
    );
    expect(chalk([], { cwd: '/' }).stdout).toBe(r.stdout);
  });
  test('version prints the bare version', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'));
    expect(chalk(['version'], { cwd: '/' })).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(chalk(['--version'], { cwd: '/' }).stdout).toBe(`${pkg.version}\n`);
  });
  test('an unknown command prints the usage on stderr and exits 2', () => {
    const r = chalk(['frobnicate'], { cwd: '/' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("unknown command 'frobnicate'");
    expect(r.stderr).toContain('Setup');
  });
  test('an unknown option exits 2 with the command usage', () => {
    const r = chalk(['config', '--bogus'], { cwd: '/' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: chalk config [--json]');
  });
  test('a bad configuration value is one line and exit 1', () => {
    const repo = scratchRepo();
    mkdirSync(join(repo, '.chalk'));
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_REVIEW=sometimes\n');
    const r = chalk(['config'], { cwd: repo });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("chalk: CHALK_REVIEW must be 'true' or 'false' (got 'sometimes') [from .chalk/config]\n");
  });
});

describe('chalk config', () => {
  test('shows every value with its source; secrets masked', () => {
    const repo = scratchRepo();
    mkdirSync(join(repo, '.chalk'));
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_TEST_CMD=npm test\nCHALK_MAX_LOOPS=5\n');
    const r = chalk(['config', '--json'], {
      cwd: repo,
      env: { CHALK_MAX_LOOPS: '9', CHALK_DECIDER_TOKEN: 'tok-abc123' },
    });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ key: string; value: string; source: string }>;
    const get = (k: string) => rows.find((x) => x.key === k);
    expect(get('CHALK_TEST_CMD')).toMatchObject({ value: 'npm test', source: 'file' });
    expect(get('CHALK_MAX_LOOPS')).toMatchObject({ value: '9', source: 'env' });
    expect(get('CHALK_BASE_BRANCH')).toMatchObject({ value: 'main', source: 'default' });
    expect(get('CHALK_DECIDER_TOKEN')).toMatchObject({ value: '********', source: 'env' });
    expect(r.stdout).not.toContain('tok-abc123');
    const table = chalk(['config'], { cwd: repo }).stdout;
    expect(table).toMatch(/^CHALK_TEST_CMD\s+npm test\s+file\s+core$/m);
  });
});

describe('chalk init', () => {
  test('creates the files for a GitHub origin and changes nothing when run again', () => {
    const repo = scratchRepo();
    git(repo, 'remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    writeFileSync(join(repo, 'CLAUDE.md'), '# Shop\n\nExisting notes.\n');
    const first = chalk(['init'], { cwd: repo });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('  created  .chalk/config');
    expect(first.stdout).toContain('  created  .chalk/textbook.md');
    expect(first.stdout).toContain('  created  specs/.gitkeep');
    expect(first.stdout).toContain('  updated  CLAUDE.md');
    expect(first.stdout).toContain('  created  .github/workflows/chalk.yml');
    expect(readFileSync(join(repo, 'CLAUDE.md'), 'utf8')).toMatch(
      /^# Shop\n\nExisting notes\.\n\n## Chalk agent rules/,
    );
    const workflow = readFileSync(join(repo, '.github', 'workflows', 'chalk.yml'), 'utf8');
    expect(workflow).toContain("startsWith(github.head_ref, 'tutoring/')");
    expect(workflow).toContain('bash -c "$test_cmd"');

    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'chalk init');
    const second = chalk(['init'], { cwd: repo });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/created|updated/);
    expect(second.stdout.match(/ {2}kept {5}/g)).toHaveLength(5);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  test('a GitLab origin gets the CI file and its include; an existing .gitlab-ci.yml gets an action line', () => {
    const repo = scratchRepo();
    git(repo, 'remote', 'add', 'origin', 'https://gitlab.example.com/acme/shop.git');
    const r = chalk(['init'], { cwd: repo });
    expect(r.stdout).toContain('  created  .gitlab/chalk.gitlab-ci.yml');
    expect(readFileSync(join(repo, '.gitlab-ci.yml'), 'utf8')).toBe(
      'include:\n  - local: .gitlab/chalk.gitlab-ci.yml\n',
    );

    const other = scratchRepo();
    git(other, 'remote', 'add', 'origin', 'https://gitlab.example.com/acme/other.git');
    writeFileSync(join(other, '.gitlab-ci.yml'), 'stages: [test]\n');
    const r2 = chalk(['init'], { cwd: other });
    expect(r2.stdout).toMatch(/ {2}action {3}add "include/);
    expect(readFileSync(join(other, '.gitlab-ci.yml'), 'utf8')).toBe('stages: [test]\n');
  });

  test('outside a git repository it refuses with one line', () => {
    const r = chalk(['init'], { cwd: '/' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('chalk: not inside a git repository; run chalk init at the root of one\n');
  });
});

describe('chalk new', () => {
  test('makes a worktree on chalk/TICKET from the base branch with a spec', () => {
    const repo = scratchRepo('shop');
    const r = chalk(['new', 'SHOP-7', 'Add', 'the', 'basket'], { cwd: repo });
    expect(r.code).toBe(0);
    const worktree = `${repo}.worktrees/SHOP-7`;
    expect(r.stdout).toBe(
      `created ${worktree} on branch chalk/SHOP-7\nnext: edit specs/SHOP-7.md, commit it, then run 'chalk run' from that directory\n`,
    );
    expect(git(worktree, 'symbolic-ref', '--short', 'HEAD')).toBe('chalk/SHOP-7');
    expect(git(worktree, 'rev-parse', 'HEAD')).toBe(git(repo, 'rev-parse', 'main'));
    const spec = readFileSync(join(worktree, 'specs', 'SHOP-7.md'), 'utf8');
    expect(spec).toContain('SHOP-7');
    expect(spec).toContain('Add the basket');
    expect(spec).toMatch(/^## Context$/m);
    expect(spec).toMatch(/^## Checkpoints$/m);
    expect(spec).toMatch(/^- \[ \] /m);
  });

  test('refuses a bad ticket key, an existing branch and a missing base branch', () => {
    const repo = scratchRepo();
    expect(chalk(['new', 'shop-7'], { cwd: repo })).toMatchObject({
      code: 2,
      stderr: "chalk: 'shop-7' is not a ticket key; use one like PROJ-123 (chalk new TICKET [title])\n",
    });
    expect(chalk(['new', 'SHOP-8'], { cwd: repo }).code).toBe(0);
    const again = chalk(['new', 'SHOP-8'], { cwd: repo });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('branch chalk/SHOP-8 already exists');
    const base = chalk(['new', 'SHOP-9'], { cwd: repo, env: { CHALK_BASE_BRANCH: 'trunk' } });
    expect(base.stderr).toBe("chalk: base branch 'trunk' does not exist; set CHALK_BASE_BRANCH in .chalk/config\n");
    expect(existsSync(`${repo}.worktrees/SHOP-9`)).toBe(false);
  });
});

describe('chalk prompts', () => {
  test('lists the eight prompts, ejects one, and refuses to eject it twice', () => {
    const repo = scratchRepo();
    const list = chalk(['prompts'], { cwd: repo });
    expect(list.stdout.trimEnd().split('\n')).toHaveLength(8);
    expect(list.stdout).toMatch(/^review\s+default$/m);
    const eject = chalk(['prompts', 'eject', 'review'], { cwd: repo });
    expect(eject).toMatchObject({
      code: 0,
      stdout: 'created .chalk/prompts/review.md; edit and commit it to change this prompt for the repository\n',
    });
    const shipped = readFileSync(join(import.meta.dirname, '..', '..', 'share', 'prompts', 'review.md'), 'utf8');
    expect(readFileSync(join(repo, '.chalk', 'prompts', 'review.md'), 'utf8')).toBe(shipped);
    expect(chalk(['prompts', 'list'], { cwd: repo }).stdout).toMatch(
      /^review\s+overridden {2}\.chalk\/prompts\/review\.md$/m,
    );
    expect(chalk(['prompts', 'eject', 'review'], { cwd: repo }).code).toBe(1);
    const bad = chalk(['prompts', 'eject', 'nope'], { cwd: repo });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("no prompt named 'nope'; choose one of: system, continue, retry");
  });
});
