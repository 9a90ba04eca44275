import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * A repository's files read as hostile input, through the real CLI: a committed symlink
 * at .chalk/textbook.md (or a symlinked .chalk) pointing at a host secret stops the
 * command with one line, and the secret appears in no output and no state file.
 */

const SECRET = 'sentinel-host-secret-9f3e2a';
let repo: string;
let secretDir: string;
let env: Record<string, string>;

const git = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
};

/** Every file under dir, read, so a test can say the secret is in none of them. */
function allText(dir: string): string {
  let text = '';
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return '';
  }
  for (const name of names) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) text += allText(path);
    else if (st?.isFile()) text += readFileSync(path, 'utf8');
  }
  return text;
}

const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
};

beforeEach(() => {
  repo = scratchRepo();
  secretDir = tempDir();
  writeFileSync(join(secretDir, 'id_ed25519'), `${SECRET}\n`);
  env = { XDG_STATE_HOME: join(tempDir(), 'state'), ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key' };
  // A ticket worktree that would otherwise pass every check before a sandbox starts.
  git('checkout', '-q', '-b', 'chalk/SHOP-1');
  mkdirSync(join(repo, 'specs'));
  writeFileSync(join(repo, 'specs', 'SHOP-1.md'), '# SHOP-1: greet\n\n- [ ] greet prints hello\n');
  mkdirSync(join(repo, '.chalk'));
  writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_TEST_CMD=true\n');
});

const commit = () => {
  git('add', '-A');
  git('commit', '-q', '-m', 'planted');
};

describe('a committed symlinked textbook', () => {
  test.each([[['run']], [['check']]])('chalk %s refuses it with one line, before anything starts', (args) => {
    symlinkSync(join(secretDir, 'id_ed25519'), join(repo, '.chalk', 'textbook.md'));
    commit();
    const r = chalk(args, { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(oneLine(r.stderr)).toBe(
      'chalk: CHALK_TEXTBOOK (.chalk/textbook.md): .chalk/textbook.md is a symbolic link, which Chalk does not follow; replace it with a regular file in the repository',
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
    expect(allText(env.XDG_STATE_HOME as string)).not.toContain(SECRET);
  });

  test('an absolute CHALK_TEXTBOOK is refused the same way', () => {
    writeFileSync(join(repo, '.chalk', 'config'), `CHALK_TEST_CMD=true\nCHALK_TEXTBOOK=${secretDir}/id_ed25519\n`);
    commit();
    const r = chalk(['run'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^chalk: CHALK_TEXTBOOK \(.*\) is an absolute path; give a path relative/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
  });

  test('a CHALK_TEXTBOOK climbing out with .. is refused', () => {
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_TEST_CMD=true\nCHALK_TEXTBOOK=../../../etc/hostname\n');
    commit();
    const r = chalk(['run'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/climbs out of the repository with '\.\.'/);
  });

  test('a symlinked prompt override is refused with one line', () => {
    mkdirSync(join(repo, '.chalk', 'prompts'));
    symlinkSync(join(secretDir, 'id_ed25519'), join(repo, '.chalk', 'prompts', 'system.md'));
    commit();
    const r = chalk(['run'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(
      /^chalk: the prompt override \(\.chalk\/prompts\/system\.md\): .* is a symbolic link, which Chalk does not follow/,
    );
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
  });
});

describe('a symlinked .chalk directory', () => {
  test('chalk config refuses it with one line; the linked config never shows', () => {
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'config'), `CHALK_TEST_CMD=${SECRET}\n`);
    writeFileSync(join(elsewhere, 'textbook.md'), `${SECRET}\n`);
    spawnSync('rm', ['-r', join(repo, '.chalk')]);
    symlinkSync(elsewhere, join(repo, '.chalk'));
    for (const args of [['config'], ['config', '--json'], ['run']]) {
      const r = chalk(args, { cwd: repo, env });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(oneLine(r.stderr)).toBe(
        'chalk: .chalk/config: .chalk is a symbolic link, which Chalk does not follow; replace it with a regular file in the repository',
      );
      expect(r.stderr).not.toContain(SECRET);
    }
  });
});
