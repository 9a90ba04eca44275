import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { UserError } from '../../core/errors.js';
import { readRepoFile } from '../../core/fs/repo-file.js';
import { loadPrompt, readTextbook } from '../../core/run/base/prompt.js';

let root: string;
let outside: string;
const SECRET = 'sentinel-secret-4b1d';
const opts = { maxBytes: 1024, what: 'CHALK_TEXTBOOK' };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'chalk-repo-file-'));
  outside = mkdtempSync(join(tmpdir(), 'chalk-outside-'));
  writeFileSync(join(outside, 'secret'), `${SECRET}\n`);
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'textbook.md'), `${SECRET}\n`);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** The one-line refusal, checked to be a UserError that never carries the file's content. */
function refusal(fn: () => unknown): string {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(UserError);
  const message = (caught as Error).message;
  expect(message).not.toContain('\n');
  expect(message).not.toContain(SECRET);
  return message;
}

describe('readRepoFile', () => {
  it('reads a regular file inside the repository', () => {
    mkdirSync(join(root, '.chalk'));
    writeFileSync(join(root, '.chalk', 'textbook.md'), 'rules\n');
    expect(readRepoFile(root, '.chalk/textbook.md', opts)).toBe('rules\n');
    expect(readRepoFile(root, './.chalk//textbook.md', opts)).toBe('rules\n');
  });

  it('answers null for a missing file or a missing directory on the way', () => {
    expect(readRepoFile(root, '.chalk/textbook.md', opts)).toBeNull();
    mkdirSync(join(root, '.chalk'));
    expect(readRepoFile(root, '.chalk/textbook.md', opts)).toBeNull();
  });

  it('refuses a symlinked file, naming it', () => {
    mkdirSync(join(root, '.chalk'));
    symlinkSync(join(outside, 'secret'), join(root, '.chalk', 'textbook.md'));
    expect(refusal(() => readRepoFile(root, '.chalk/textbook.md', opts))).toBe(
      'CHALK_TEXTBOOK (.chalk/textbook.md): .chalk/textbook.md is a symbolic link, which Chalk does not follow; replace it with a regular file in the repository',
    );
  });

  it('refuses a symlink that points inside the repository too', () => {
    writeFileSync(join(root, 'rules.md'), 'rules\n');
    symlinkSync('rules.md', join(root, 'textbook.md'));
    expect(refusal(() => readRepoFile(root, 'textbook.md', opts))).toMatch(/textbook\.md is a symbolic link/);
  });

  it('refuses a symlinked parent directory (.chalk -> elsewhere)', () => {
    symlinkSync(join(outside, 'dir'), join(root, '.chalk'));
    expect(refusal(() => readRepoFile(root, '.chalk/textbook.md', opts))).toMatch(
      /^CHALK_TEXTBOOK \(\.chalk\/textbook\.md\): \.chalk is a symbolic link/,
    );
  });

  it('refuses a dangling symlink rather than calling it missing', () => {
    symlinkSync(join(outside, 'nothing-here'), join(root, 'textbook.md'));
    expect(refusal(() => readRepoFile(root, 'textbook.md', opts))).toMatch(/is a symbolic link/);
  });

  it('refuses a FIFO without blocking on it', () => {
    execFileSync('mkfifo', [join(root, 'textbook.md')]);
    expect(refusal(() => readRepoFile(root, 'textbook.md', opts))).toBe(
      'CHALK_TEXTBOOK (textbook.md) is a FIFO; replace it with a regular file in the repository',
    );
  });

  it('refuses a directory where a file is expected', () => {
    mkdirSync(join(root, 'textbook.md'));
    expect(refusal(() => readRepoFile(root, 'textbook.md', opts))).toMatch(/is a directory; replace it/);
  });

  it('refuses a file where a directory is expected', () => {
    writeFileSync(join(root, '.chalk'), 'x');
    expect(refusal(() => readRepoFile(root, '.chalk/textbook.md', opts))).toMatch(/\.chalk is .*, not a directory$/);
  });

  it('refuses a device', () => {
    symlinkSync('/dev/null', join(root, 'link'));
    // /dev/null itself, as a repository path, cannot be named (absolute); a device inside the
    // repository is refused by kind. The link to it is refused as a link.
    expect(refusal(() => readRepoFile(root, 'link', opts))).toMatch(/is a symbolic link/);
    expect(refusal(() => readRepoFile('/dev', 'null', opts))).toBe(
      'CHALK_TEXTBOOK (null) is a device; replace it with a regular file in the repository',
    );
  });

  it.each([
    ['an absolute path', '/etc/passwd', /is an absolute path; give a path relative to the repository root$/],
    ['a .. segment', '../secret', /climbs out of the repository with '\.\.'/],
    ['a .. segment in the middle', '.chalk/../../secret', /climbs out of the repository with '\.\.'/],
    ['an empty path', '.', /names no file/],
  ])('refuses %s', (_, path, expected) => {
    expect(refusal(() => readRepoFile(root, path, opts))).toMatch(expected);
  });

  it('refuses a file over the cap, naming the cap', () => {
    writeFileSync(join(root, 'big.md'), 'x'.repeat(1025));
    writeFileSync(join(root, 'fits.md'), 'x'.repeat(1024));
    expect(refusal(() => readRepoFile(root, 'big.md', opts))).toBe(
      'CHALK_TEXTBOOK (big.md) is 1025 bytes, over the 1024-byte limit; make it smaller',
    );
    expect(readRepoFile(root, 'fits.md', opts)).toHaveLength(1024);
  });

  it('names the file alone when that is what it is called', () => {
    execFileSync('mkfifo', [join(root, 'config')]);
    expect(refusal(() => readRepoFile(root, 'config', { maxBytes: 10, what: 'config' }))).toBe(
      'config is a FIFO; replace it with a regular file in the repository',
    );
  });
});

describe('the readers that use it', () => {
  it('readTextbook refuses a symlinked .chalk/textbook.md and an absolute CHALK_TEXTBOOK', () => {
    mkdirSync(join(root, '.chalk'));
    symlinkSync(join(outside, 'secret'), join(root, '.chalk', 'textbook.md'));
    expect(refusal(() => readTextbook(root, '.chalk/textbook.md'))).toMatch(/^CHALK_TEXTBOOK/);
    expect(refusal(() => readTextbook(root, join(outside, 'secret')))).toMatch(/absolute path/);
    expect(refusal(() => readTextbook(root, '../secret'))).toMatch(/'\.\.'/);
  });

  it('readTextbook caps the textbook at 256 KiB', () => {
    writeFileSync(join(root, 'tb.md'), 'x'.repeat(256 * 1024 + 1));
    expect(refusal(() => readTextbook(root, 'tb.md'))).toMatch(/over the 262144-byte limit/);
  });

  it('loadPrompt refuses a symlinked override and a symlinked .chalk', () => {
    mkdirSync(join(root, '.chalk', 'prompts'), { recursive: true });
    symlinkSync(join(outside, 'secret'), join(root, '.chalk', 'prompts', 'system.md'));
    expect(refusal(() => loadPrompt('system', { root }))).toMatch(
      /^the prompt override \(\.chalk\/prompts\/system\.md\): .* is a symbolic link/,
    );
    rmSync(join(root, '.chalk'), { recursive: true });
    mkdirSync(join(outside, 'dir', 'prompts'));
    writeFileSync(join(outside, 'dir', 'prompts', 'review.md'), `${SECRET}\n`);
    symlinkSync(join(outside, 'dir'), join(root, '.chalk'));
    expect(refusal(() => loadPrompt('review', { root }))).toMatch(/\.chalk is a symbolic link/);
  });

  it('loadConfig refuses a symlinked .chalk/config and a FIFO, as a ConfigError line', () => {
    mkdirSync(join(root, '.chalk'));
    writeFileSync(join(outside, 'config'), 'CHALK_TEST_CMD=npm test\n');
    symlinkSync(join(outside, 'config'), join(root, '.chalk', 'config'));
    expect(refusal(() => loadConfig({ root, env: {} }))).toMatch(/^\.chalk\/config is a symbolic link/);
    rmSync(join(root, '.chalk', 'config'));
    execFileSync('mkfifo', [join(root, '.chalk', 'config')]);
    expect(refusal(() => loadConfig({ root, env: {} }))).toBe(
      '.chalk/config is a FIFO; replace it with a regular file in the repository',
    );
  });

  it('loadConfig refuses a .chalk/config over 1 MiB and reads one under it', () => {
    mkdirSync(join(root, '.chalk'));
    writeFileSync(join(root, '.chalk', 'config'), `CHALK_TEST_CMD=npm test\n${'#'.repeat(1024 * 1024)}`);
    expect(refusal(() => loadConfig({ root, env: {} }))).toMatch(/over the 1048576-byte limit/);
    writeFileSync(join(root, '.chalk', 'config'), 'CHALK_TEST_CMD=npm test\n');
    expect(loadConfig({ root, env: {} }).entry('CHALK_TEST_CMD')).toMatchObject({ raw: 'npm test', source: 'file' });
  });
});
