import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, resetConfigWarnings } from '../../core/config/config.js';
import { pluginKeyTable } from '../../core/config/table.js';
import type { TreeEntry } from '../../core/ports/host-git.js';
import { maySaveFrom, setupInputs, setupKey } from '../../core/setup-cache/key.js';
import { overflowKeys, staleKeys } from '../../core/setup-cache/stale.js';
import type { CacheEntry } from '../../core/setup-cache/store.js';
import { BUILTINS } from '../../plugins/builtin.js';
import { tempDir } from '../helpers/cli.js';

/** The setup cache's pure rules: which files key it, the key, where a state may be saved from, what is stale; its keys. */

const entry = (path: string, oid = 'a'.repeat(40), mode = '100644'): TreeEntry => ({ path, oid, mode });

describe('what keys a saved setup state', () => {
  it('takes the manifests and lockfiles at any depth, sorted, and nothing else', () => {
    const tree = [
      'src/index.ts',
      'package.json',
      'packages/app/package.json',
      'pnpm-lock.yaml',
      'requirements-dev.txt',
      'docs/requirements.md',
      'service/go.sum',
      'Cargo.lock',
      'app/App.csproj',
      'README.md',
      'yarn.lock.bak',
    ].map((p) => entry(p));
    expect(setupInputs(tree).map((e) => e.path)).toEqual([
      'Cargo.lock',
      'app/App.csproj',
      'package.json',
      'packages/app/package.json',
      'pnpm-lock.yaml',
      'requirements-dev.txt',
      'service/go.sum',
    ]);
  });

  const parts = {
    repoRoot: '/home/sam/shop',
    imageId: 'sha256:1111',
    command: 'npm ci',
    dirs: ['node_modules'],
    inputs: [entry('package-lock.json')],
  };

  it('changes with the repository, the image, the command, the directories and each input’s content, mode or path', () => {
    const key = setupKey(parts);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(setupKey({ ...parts })).toBe(key);
    const changed = [
      { ...parts, repoRoot: '/home/eve/shop' },
      { ...parts, imageId: 'sha256:2222' },
      { ...parts, command: 'npm install' },
      { ...parts, dirs: ['node_modules', '.venv'] },
      { ...parts, inputs: [entry('package-lock.json', 'b'.repeat(40))] },
      { ...parts, inputs: [entry('package-lock.json', 'a'.repeat(40), '120000')] },
      { ...parts, inputs: [entry('app/package-lock.json')] },
      { ...parts, inputs: [] },
    ].map(setupKey);
    expect(new Set([key, ...changed]).size).toBe(changed.length + 1);
  });

  it('is saved only from a tree that is the base branch’s but for specs', () => {
    expect(maySaveFrom(['specs/SHOP-1.md'], 'specs/')).toBe(true);
    expect(maySaveFrom([], 'specs/')).toBe(true);
    expect(maySaveFrom(['specs/SHOP-1.md', 'setup.py'], 'specs/')).toBe(false);
    expect(maySaveFrom(['specsx/a.md'], 'specs/')).toBe(false);
    // Where the branch left the base is unknown: nothing is saved.
    expect(maySaveFrom(null, 'specs/')).toBe(false);
  });
});

describe('stale states', () => {
  const e = (key: string, usedAt: string): CacheEntry => ({
    key: key.repeat(64),
    root: '/r',
    image: 'i',
    command: 'c',
    inputs: 1,
    bytes: 1,
    createdAt: usedAt,
    usedAt,
  });
  const all = [
    e('a', '2026-01-01T00:00:00.000Z'),
    e('b', '2026-03-01T00:00:00.000Z'),
    e('c', '2026-02-01T00:00:00.000Z'),
  ];

  it('are all but the one the base branch restores now, or, that unknown, all but the most recently used', () => {
    expect(staleKeys(all, 'c'.repeat(64))).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
    expect(staleKeys(all, 'd'.repeat(64))).toEqual(all.map((x) => x.key));
    expect(staleKeys(all, null).sort()).toEqual(['a'.repeat(64), 'c'.repeat(64)]);
  });

  it('after a save: all but the newest two', () => {
    expect(overflowKeys(all, 2)).toEqual(['a'.repeat(64)]);
    expect(overflowKeys(all.slice(0, 1), 2)).toEqual([]);
  });
});

describe('its configuration', () => {
  beforeEach(() => resetConfigWarnings());
  const keys = pluginKeyTable(BUILTINS);
  const repoWith = (file: string) => {
    const root = tempDir();
    mkdirSync(join(root, '.chalk'));
    writeFileSync(join(root, '.chalk', 'config'), file);
    return root;
  };

  it('a repository cannot raise the cap: CHALK_SETUP_CACHE_MB is the machine’s', () => {
    const warnings: string[] = [];
    const config = loadConfig({
      keys,
      root: repoWith('CHALK_SETUP_CACHE_MB=999999\n'),
      env: {},
      warn: (l) => warnings.push(l),
    });
    expect(config.num('CHALK_SETUP_CACHE_MB')).toBe(2048);
    expect(warnings).toEqual([
      "ignoring CHALK_SETUP_CACHE_MB in .chalk/config: only this machine's environment sets it",
    ]);
    expect(loadConfig({ keys, root: null, env: { CHALK_SETUP_CACHE_MB: '64' } }).num('CHALK_SETUP_CACHE_MB')).toBe(64);
  });

  it('the directories are plain names, never a path, .. or .git', () => {
    const dirs = (v: string) => loadConfig({ keys, root: null, env: { CHALK_SETUP_CACHE_DIRS: v } });
    expect(dirs('node_modules, .venv,_build').list('CHALK_SETUP_CACHE_DIRS')).toEqual([
      'node_modules',
      '.venv',
      '_build',
    ]);
    for (const bad of ['../etc', 'a/b', '..', '.git', 'node_modules,.git']) {
      expect(() => dirs(bad)).toThrow(/^CHALK_SETUP_CACHE_DIRS must be a comma list of directory names/);
    }
  });
});
