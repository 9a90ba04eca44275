import { describe, expect, it } from 'vitest';
import { hostGitArgv, oneLine } from '../../core/git/host-git.js';

describe('host git argv', () => {
  it('turns hooks and fsmonitor off in front of every subcommand', () => {
    expect(hostGitArgv(['status', '--porcelain'])).toEqual([
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.fsmonitor=false',
      'status',
      '--porcelain',
    ]);
  });
  it.each(['diff', 'log', 'show', 'diff-tree'])('%s runs no external diff and no textconv', (sub) => {
    expect(hostGitArgv([sub, 'a', 'b']).slice(4)).toEqual([sub, '--no-ext-diff', '--no-textconv', 'a', 'b']);
  });
  it.each(['push', 'commit', 'merge'])('%s skips verification hooks as well', (sub) => {
    expect(hostGitArgv([sub, 'x']).slice(4)).toEqual([sub, '--no-verify', 'x']);
  });
  it('leaves other subcommands alone after the settings', () => {
    expect(hostGitArgv(['fetch', '--quiet']).slice(4)).toEqual(['fetch', '--quiet']);
  });
  it('refuses an empty command', () => {
    expect(() => hostGitArgv([])).toThrow(/subcommand/);
  });
});

describe('oneLine', () => {
  it('keeps the first line without control characters', () => {
    expect(oneLine('\n fatal: bad\u001b[2J thing\r\nsecond line')).toBe('fatal: bad[2J thing');
  });
});
