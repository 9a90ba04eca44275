import { describe, expect, it } from 'vitest';
import { inside } from '../../core/run/base/home.js';

describe('a configured path inside the worktree', () => {
  it.each<[string, string | null]>([
    ['.husky', '.husky'],
    ['./tools/hooks/', 'tools/hooks'],
    ['/home/sam/shop/.hooks', '.hooks'],
    ['/home/sam/shop', null],
    ['.', null],
    ['../shared-hooks', null],
    ['/etc/git-hooks', null],
    ['/home/sam/shop-other/.hooks', null],
  ])('%s in /home/sam/shop: %s', (path, rel) => {
    expect(inside('/home/sam/shop', path)).toBe(rel);
  });
});
