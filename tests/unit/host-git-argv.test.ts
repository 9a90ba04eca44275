import { describe, expect, it } from 'vitest';
import { filterOffSettings, hostGitArgv, oneLine, withConfigEnv } from '../../core/git/host-git.js';

describe('host git argv', () => {
  it('turns hooks, fsmonitor and submodule recursion off in front of every subcommand', () => {
    expect(hostGitArgv(['status', '--porcelain'])).toEqual([
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'core.fsmonitor=false',
      '-c',
      'submodule.recurse=false',
      'status',
      '--porcelain',
    ]);
  });
  it.each(['diff', 'log', 'show', 'diff-tree'])('%s runs no external diff and no textconv', (sub) => {
    expect(hostGitArgv([sub, 'a', 'b']).slice(6)).toEqual([sub, '--no-ext-diff', '--no-textconv', 'a', 'b']);
  });
  it.each(['push', 'commit', 'merge'])('%s skips verification hooks as well', (sub) => {
    expect(hostGitArgv([sub, 'x']).slice(6)).toEqual([sub, '--no-verify', 'x']);
  });
  it('leaves other subcommands alone after the settings', () => {
    expect(hostGitArgv(['fetch', '--quiet']).slice(6)).toEqual(['fetch', '--quiet']);
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

describe('filter drivers off', () => {
  it('empties every program of each driver and makes none required', () => {
    expect(filterOffSettings(['lfs', 'a.b=c'])).toEqual([
      ['filter.lfs.clean', ''],
      ['filter.lfs.smudge', ''],
      ['filter.lfs.process', ''],
      ['filter.lfs.required', 'false'],
      ['filter.a.b=c.clean', ''],
      ['filter.a.b=c.smudge', ''],
      ['filter.a.b=c.process', ''],
      ['filter.a.b=c.required', 'false'],
    ]);
  });

  it('passes them after any GIT_CONFIG_COUNT settings already there, names as they are', () => {
    const env = withConfigEnv([['filter.x=y.smudge', '']], {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'Sam',
    });
    expect(env).toMatchObject({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_KEY_1: 'filter.x=y.smudge',
      GIT_CONFIG_VALUE_1: '',
    });
  });
});
