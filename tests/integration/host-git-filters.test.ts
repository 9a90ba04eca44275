import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { importBundle } from '../../core/git/bundle-import.js';
import { hostGit, includedConfigFiles, statusPorcelain } from '../../core/git/host-git.js';
import { run } from '../../core/process/run.js';
import { tempDir } from '../helpers/cli.js';
import { git, marks, makeWorld as newWorld, type World } from './host-git-world.js';

/** Worlds made by this file, removed after each test (`rm`: a failed fast-forward's control leaves directories too deep for node's). */
const made: string[] = [];
const makeWorld = (...args: Parameters<typeof newWorld>) => {
  const w = newWorld(...args);
  made.push(w.dir);
  return w;
};
afterEach(() => {
  for (const dir of made.splice(0)) spawnSync('rm', ['-rf', dir]);
});

/**
 * Host git runs no filter driver on what a sandbox sent. The person's git
 * configuration defines drivers (git-lfs as `git lfs install` writes it, a
 * smudge/clean pair, a long-running process filter, one from a file their
 * config includes from the tree); the agent commits a `.gitattributes` that
 * selects each of them and a `.lfsconfig` pointing git-lfs at a server of its
 * choosing. Each test's control shows plain git running the drivers in the
 * same setup.
 */

const CI = process.env.CI === 'true';
const hasLfs = spawnSync('git', ['lfs', 'version']).status === 0;
if (CI && !hasLfs) throw new Error('CI needs git-lfs (.ci/setup.d/10-packages.sh)');

/** A server standing for the agent's LFS endpoint: it counts what reaches it. */
let server: Server;
let hits: string[] = [];
let url = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/lfs`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const POINTER = [
  'version https://git-lfs.github.com/spec/v1',
  'oid sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
  'size 5',
  '',
].join('\n');

/** The person's global configuration: git-lfs installed, and drivers that leave marks. */
function personsConfig(w: World): string {
  const file = join(w.dir, 'gitconfig');
  // Quoted: a `;` starts a comment in a configuration file.
  const mark = (name: string) => `"sh -c 'touch ${w.sentinels}/${name}; cat'"`;
  writeFileSync(
    file,
    [
      '[filter "lfs"]',
      '\tclean = git-lfs clean -- %f',
      '\tsmudge = git-lfs smudge -- %f',
      '\tprocess = git-lfs filter-process',
      '\trequired = true',
      '[filter "sneaky"]',
      `\tclean = ${mark('clean')}`,
      `\tsmudge = ${mark('smudge')}`,
      '[filter "proc"]',
      // A long-running filter (git's process protocol, spoken here by git-lfs) that leaves a mark.
      `\tprocess = "sh -c 'touch ${w.sentinels}/process; exec git-lfs filter-process'"`,
      '[user]',
      '\tname = Sam Person',
      '\temail = sam@example.com',
      '',
    ].join('\n'),
  );
  return file;
}

interface Attack {
  bundle: string;
  tip: string;
}

/** The agent's commit: attributes selecting every driver, its `.lfsconfig`, and files for each. */
function agentCommit(w: World): Attack {
  const files: Record<string, string> = {
    '.gitattributes':
      '*.bin filter=lfs diff=lfs merge=lfs -text\n*.txt filter=sneaky\n*.dat filter=proc\n*.evil filter=evil\n',
    '.lfsconfig': `[lfs]\n\turl = ${url}\n`,
    'data.bin': POINTER,
    'notes.txt': 'plain notes\n',
    'table.dat': 'a,b\n',
    'x.evil': 'evil\n',
  };
  for (const [p, content] of Object.entries(files)) writeFileSync(join(w.sandbox, p), content);
  // The sandbox has no driver configured: it commits the bytes as they are.
  const r = spawnSync('git', ['add', '-A'], {
    cwd: w.sandbox,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  expect(r.status).toBe(0);
  git(w.sandbox, 'commit', '-q', '-m', 'agent: attributes and an lfs endpoint');
  const bundle = join(w.dir, 'filters.bundle');
  git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
  return { bundle, tip: git(w.sandbox, 'rev-parse', 'HEAD') };
}

/** The person's repository includes `.gitconfig` from its tree, which defines one more driver. */
function includeFromTree(w: World): void {
  writeFileSync(
    join(w.work, '.gitconfig'),
    `[filter "evil"]\n\tsmudge = "sh -c 'touch ${w.sentinels}/included; cat'"\n`,
  );
  git(w.work, 'add', '.gitconfig');
  git(w.work, 'commit', '-q', '--no-verify', '-m', 'shared git config');
  git(w.work, 'config', 'include.path', '../.gitconfig');
  w.base = git(w.work, 'rev-parse', 'HEAD');
  git(w.sandbox, 'fetch', '-q', w.work, 'chalk/SHOP-1');
  git(w.sandbox, 'reset', '-q', '--hard', 'FETCH_HEAD');
}

const clearMarks = (w: World) => {
  for (const f of readdirSync(w.sentinels)) rmSync(join(w.sentinels, f));
};

describe.skipIf(!hasLfs)('host git runs no filter driver on what the sandbox sent', () => {
  let w: World;
  let attack: Attack;
  const saved = process.env.GIT_CONFIG_GLOBAL;
  beforeEach(() => {
    hits = [];
    w = makeWorld('.husky');
    includeFromTree(w);
    attack = agentCommit(w);
    // From here on every git, the test's and Chalk's, reads the person's configuration.
    process.env.GIT_CONFIG_GLOBAL = personsConfig(w);
    clearMarks(w);
    return () => {
      if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved;
    };
  });

  it("control: plain git's fast-forward runs every driver and calls the agent's LFS server", async () => {
    git(w.work, 'fetch', '-q', attack.bundle, 'HEAD');
    // Not spawnSync: the server in this process must answer while git-lfs calls it.
    await run('git', ['merge', '--ff-only', '-q', 'FETCH_HEAD'], { cwd: w.work });
    expect(hits.some((h) => h.startsWith('POST /lfs/objects/batch'))).toBe(true);
    expect(marks(w)).toEqual(expect.arrayContaining(['included', 'process', 'smudge']));
  });

  it('importBundle fast-forwards with no driver run and no request: the files are the committed bytes', async () => {
    const r = await importBundle({
      cwd: w.work,
      bundle: attack.bundle,
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
    });
    expect(r.tip).toBe(attack.tip);
    expect(hits).toEqual([]);
    expect(marks(w)).toEqual([]);
    expect(readFileSync(join(w.work, 'data.bin'), 'utf8')).toBe(POINTER);
    expect(readFileSync(join(w.work, 'notes.txt'), 'utf8')).toBe('plain notes\n');
  });

  it("status and add on the tree's files run no clean filter (control: plain git's do)", async () => {
    await importBundle({
      cwd: w.work,
      bundle: attack.bundle,
      base: w.base,
      target: { kind: 'fast-forward', branch: 'chalk/SHOP-1' },
    });
    // Stat changes make git read the content again, through the clean filter.
    const touchAll = () => {
      const later = new Date(Date.now() + 60_000);
      for (const f of ['notes.txt', 'data.bin', 'table.dat']) utimesSync(join(w.work, f), later, later);
    };
    touchAll();
    expect(await statusPorcelain(w.work)).toEqual([]);
    writeFileSync(join(w.work, 'more.txt'), 'more\n');
    expect((await hostGit(['add', '--', 'more.txt'], { cwd: w.work })).code).toBe(0);
    expect(marks(w)).toEqual([]);
    expect(hits).toEqual([]);
    touchAll();
    git(w.work, 'status', '--porcelain');
    git(w.work, 'add', '--', 'notes.txt');
    expect(marks(w)).toContain('clean');
  });

  it("the files the person's configuration includes from the tree are found (the guard keeps them)", async () => {
    expect(await includedConfigFiles(w.work)).toContain(join(w.work, '.gitconfig'));
    const elsewhere = tempDir('chalk-include-');
    made.push(elsewhere);
    git(w.work, 'config', '--add', 'include.path', join(elsewhere, 'x.conf'));
    git(w.work, 'config', 'includeIf.gitdir:/nowhere/.path', '../other.conf');
    const found = await includedConfigFiles(w.work);
    expect(found).toEqual(
      expect.arrayContaining([join(w.work, '.gitconfig'), join(elsewhere, 'x.conf'), join(w.work, 'other.conf')]),
    );
  });
});
