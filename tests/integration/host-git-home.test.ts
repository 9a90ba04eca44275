import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BundleImportError, type ImportBundleOptions, importBundle } from '../../core/git/bundle-import.js';
import { fileAt } from '../../core/git/host-git.js';
import { DEFAULT_HOME_LIMITS, type HomeLimits } from '../../core/ports/host-git.js';
import { git, gitCode, makeWorld as newWorld, refsOf, type World } from './host-git-world.js';

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
 * What comes home from a sandbox, against real git: the tree a bundle brings
 * is capped before anything is checked out (files, size, path length, objects),
 * only a commit named HEAD is taken, and a fast-forward that is refused or
 * fails part way leaves the branch, the index and the worktree as they were.
 * The sandbox's "agent" here builds its trees with git plumbing, as an agent
 * can: a few KiB of bundle for a million files or five GiB.
 */

const FF = { kind: 'fast-forward', branch: 'chalk/SHOP-1' } as const;
const PARK = { kind: 'branch', name: 'detention/SHOP-1-9' } as const;

/** git with `input` on stdin (plumbing: mktree, hash-object). */
function gitIn(cwd: string, input: string | Buffer, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

const blob = (w: World, content: string | Buffer) => gitIn(w.sandbox, content, 'hash-object', '-w', '--stdin');
const mktree = (w: World, entries: string[]) => gitIn(w.sandbox, `${entries.join('\n')}\n`, 'mktree');
const entry = (mode: '100644' | '040000', oid: string, name: string) =>
  `${mode} ${mode === '040000' ? 'tree' : 'blob'} ${oid}\t${name}`;
/** The entries of the base's tree, to build on. */
const baseEntries = (w: World) => git(w.sandbox, 'ls-tree', w.base).split('\n').filter(Boolean);

/**
 * `git bundle create -q OUT BASE..HEAD` in the sandbox, as its export does. Its stderr is left
 * out: for a deep tree git warns once per path it cannot look up attributes for (megabytes).
 */
function exportBundle(w: World, out: string, base = w.base): string {
  const r = spawnSync('git', ['bundle', 'create', '-q', out, `${base}..HEAD`], { cwd: w.sandbox, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`git bundle create failed (${r.status})`);
  return out;
}

/**
 * The agent commits `files` (path to content) on top of `base` in one `git fast-import`, which
 * writes a path of any length without touching a file system, and exports base..HEAD.
 */
function importCommit(w: World, files: Record<string, string>, o: { base?: string; gone?: string[] } = {}) {
  const base = o.base ?? w.base;
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const stream = [
    'commit refs/heads/chalk/SHOP-1\n',
    'committer Agent <agent@example.com> 946684800 +0000\n',
    data('agent work'),
    `from ${base}\n`,
    ...(o.gone ?? []).map((p) => `D ${p}\n`),
    ...Object.entries(files).map(([p, text]) => `M 100644 inline ${p}\n${data(text)}`),
    '\n',
  ].join('');
  gitIn(w.sandbox, stream, 'fast-import', '--quiet', '--force');
  return { bundle: exportBundle(w, join(w.dir, 'imported.bundle'), base), tip: git(w.sandbox, 'rev-parse', 'HEAD') };
}

/** `a/a/a/.../f`, `depth` directories deep under `top`. */
const deepPath = (top: string, depth: number) => `${top}/${'a/'.repeat(depth)}f`;

/** The agent commits `tree` on top of the base and exports base..HEAD. */
function commitTree(w: World, tree: string, name = 'out.bundle'): { bundle: string; tip: string } {
  const tip = git(w.sandbox, 'commit-tree', '-p', 'HEAD', '-m', 'agent work', tree);
  git(w.sandbox, 'update-ref', 'HEAD', tip);
  return { bundle: exportBundle(w, join(w.dir, name)), tip };
}

/** Every entry under `dir` but `.git`: kind, mode, and content or link target, by relative path. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, rel));
    } catch (err) {
      out[rel] = `unreadable ${(err as NodeJS.ErrnoException).code}`;
      return;
    }
    for (const name of names) {
      const r = rel === '' ? name : `${rel}/${name}`;
      if (r === '.git') continue;
      const st = lstatSync(join(dir, r));
      if (st.isDirectory()) {
        out[r] = 'dir';
        walk(r);
      } else if (st.isSymbolicLink()) out[r] = `link ${readlinkSync(join(dir, r))}`;
      else {
        const sum = createHash('sha256')
          .update(readFileSync(join(dir, r)))
          .digest('hex');
        out[r] = `file ${(st.mode & 0o777).toString(8)} ${sum}`;
      }
    }
  };
  walk('');
  return out;
}

/** What the person has: refs, HEAD, the index and every file of the worktree. */
const state = (w: World) => ({
  ...refsOf(w),
  index: git(w.work, 'ls-files', '-s'),
  status: git(w.work, 'status', '--porcelain', '--ignored'),
  files: snapshot(w.work),
});

/** Imports and expects a one-line refusal matching `message`, with nothing of the person's changed. */
async function refused(
  w: World,
  o: Partial<ImportBundleOptions> & { bundle: string },
  message: RegExp,
): Promise<string> {
  const before = state(w);
  const err = await importBundle({ cwd: w.work, base: w.base, target: FF, ...o }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BundleImportError);
  const line = (err as Error).message;
  expect(line).toMatch(message);
  expect(line).not.toContain('\n');
  expect(line.length).toBeLessThan(240);
  expect(state(w)).toEqual(before);
  expect(git(w.work, 'for-each-ref', 'refs/chalk/')).toBe('');
  return line;
}

const limits = (o: Partial<HomeLimits>): HomeLimits => ({ ...DEFAULT_HOME_LIMITS, ...o });

/** A varint of 7-bit groups, least significant first. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const c = n % 128;
    n = Math.floor(n / 128);
    if (n === 0) return [...out, c];
    out.push(c | 0x80);
  }
}

/**
 * A pack of two objects: a 1 MiB blob of zeros, and a delta against it that copies it over and
 * over into `mib` MiB (a four-byte instruction per 64 KiB). A few hundred bytes compressed.
 */
function deltaBomb(mib: number): Buffer {
  const header = (type: number, size: number) => {
    const b: number[] = [];
    let c = (type << 4) | (size & 15);
    let rest = Math.floor(size / 16);
    while (rest > 0) {
      b.push(c | 0x80);
      c = rest % 128;
      rest = Math.floor(rest / 128);
    }
    return Buffer.from([...b, c]);
  };
  const base = Buffer.alloc(1024 * 1024);
  const a = Buffer.concat([header(3, base.length), deflateSync(base)]);
  const copies = (mib * 1024 * 1024) / 0x10000;
  const delta = Buffer.concat([
    Buffer.from([...varint(base.length), ...varint(mib * 1024 * 1024)]),
    Buffer.alloc(copies, 0x80),
  ]);
  // OFS_DELTA: its base is `a.length` bytes back, in git's offset encoding.
  let n = a.length;
  const ofs = [n & 0x7f];
  for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) {
    n -= 1;
    ofs.unshift(0x80 | (n & 0x7f));
  }
  const b = Buffer.concat([header(6, delta.length), Buffer.from(ofs), deflateSync(delta)]);
  const body = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 2]), a, b]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

describe('the tree a bundle brings is capped before anything is checked out', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
  });

  it('501,000 files of one shared blob, in a bundle of a few KiB, on the default cap: for the branch and the detention branch', async () => {
    const x = blob(w, 'x\n');
    const thousand = mktree(
      w,
      Array.from({ length: 1000 }, (_, i) => entry('100644', x, `f${i}`)),
    );
    const tree = mktree(w, [
      ...baseEntries(w),
      ...Array.from({ length: 501 }, (_, i) => entry('040000', thousand, `d${i}`)),
    ]);
    const { bundle, tip } = commitTree(w, tree);
    // The bomb: a few KiB that plain git would check out as 501,000 files.
    expect(statSync(bundle).size).toBeLessThan(16 * 1024);
    const files = (rev: string) => gitIn(w.sandbox, '', 'ls-tree', '-r', '--name-only', rev).split('\n').length;
    expect(files(tip)).toBe(501_000 + files(w.base));
    await refused(
      w,
      { bundle },
      /^the sandbox's tree has more than 500000 files: CHALK_HOME_MAX_FILES caps it at 500000$/,
    );
    // The detention branch is capped the same (here on a lower cap, to keep the test short).
    await refused(
      w,
      { bundle, target: PARK, limits: limits({ maxFiles: 1000 }) },
      /^the sandbox's tree has more than 1000 files: CHALK_HOME_MAX_FILES caps it at 1000$/,
    );
    // Refused in the quarantine: none of it reached the person's store.
    expect(gitCode(w.work, 'cat-file', '-e', tip)).not.toBe(0);
  });

  it('5 GiB of one shared 1 MiB blob, in a bundle of a few KiB, on the default cap', async () => {
    const mib = blob(w, Buffer.alloc(1024 * 1024, 'a'));
    const sixtyFour = mktree(
      w,
      Array.from({ length: 64 }, (_, i) => entry('100644', mib, `m${i}`)),
    );
    const tree = mktree(w, [
      ...baseEntries(w),
      ...Array.from({ length: 80 }, (_, i) => entry('040000', sixtyFour, `g${i}`)),
    ]);
    const { bundle } = commitTree(w, tree);
    expect(statSync(bundle).size).toBeLessThan(64 * 1024);
    const cap = /^the sandbox's tree holds more than 4096 MiB: CHALK_HOME_MAX_MB caps it at 4096$/;
    await refused(w, { bundle }, cap);
    await refused(w, { bundle, target: PARK }, cap);
  });

  it('a path 3,000 directories deep: one short line naming the cap, and no directory made', async () => {
    const { bundle } = importCommit(w, { [deepPath('deep', 3000)]: 'deep\n' });
    const line = await refused(
      w,
      { bundle },
      /^the sandbox's tree has a path of (more than 1024|[0-9]+) bytes \(deep\/a\/a\/a.*\.\.\.\): CHALK_HOME_MAX_PATH caps it at 1024$/,
    );
    expect(line.length).toBeLessThan(160);
    expect(existsSync(join(w.work, 'deep'))).toBe(false);
    await refused(w, { bundle, target: PARK }, /CHALK_HOME_MAX_PATH caps it at 1024$/);
  });

  it('a name longer than a file system holds', async () => {
    const { bundle } = commitTree(w, mktree(w, [...baseEntries(w), entry('100644', blob(w, 'n\n'), 'n'.repeat(300))]));
    await refused(
      w,
      { bundle },
      /^the sandbox's tree has a name of 300 bytes \(n{48}\.\.\.\), longer than any file system here holds \(255\)$/,
    );
  });

  it('a bundle of more objects than the cap, before git reads it', async () => {
    for (let i = 0; i < 30; i++) git(w.sandbox, 'commit', '-q', '--allow-empty', '-m', `empty ${i}`);
    const bundle = join(w.dir, 'many.bundle');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
    await refused(
      w,
      { bundle, limits: limits({ maxObjects: 20 }) },
      /^the sandbox's bundle holds 3[0-9] objects: CHALK_HOME_MAX_OBJECTS caps it at 20$/,
    );
  });

  it('a delta that builds 1 GiB from a pack of a few hundred bytes, before git reads it', async () => {
    const bundle = join(w.dir, 'delta.bundle');
    const pack = deltaBomb(1024);
    writeFileSync(`${bundle}.pack`, pack);
    writeFileSync(bundle, Buffer.concat([Buffer.from(`# v2 git bundle\n${w.base} HEAD\n\n`), pack]));
    expect(statSync(bundle).size).toBeLessThan(2048);
    await refused(
      w,
      { bundle },
      /^the sandbox's bundle has a delta building more than 512 MiB, which git never writes$/,
    );
    // Control: git's own index-pack builds the gigabyte in memory (here it may not: 512 MiB of address space).
    const q = join(w.dir, 'q.git');
    git(w.dir, 'init', '-q', '--bare', q);
    const plain = spawnSync('sh', ['-c', `ulimit -v 524288; git index-pack --stdin < '${bundle}.pack'`], {
      cwd: q,
      encoding: 'utf8',
    });
    expect(plain.stderr).toMatch(/Out of memory, malloc failed \(tried to allocate 1073741825 bytes\)/);
  });

  it('128 MiB of zeros in a bundle of a few hundred KiB is refused before git inflates it', async () => {
    const zeros = gitIn(w.sandbox, Buffer.alloc(128 * 1024 * 1024), 'hash-object', '-w', '--stdin');
    const { bundle } = commitTree(w, mktree(w, [...baseEntries(w), entry('100644', zeros, 'zeros.bin')]));
    expect(statSync(bundle).size).toBeLessThan(1024 * 1024);
    await refused(
      w,
      { bundle, limits: limits({ maxMiB: 100 }) },
      /^the sandbox's bundle inflates to more than 100 MiB: CHALK_HOME_MAX_MB caps it at 100$/,
    );
  });

  it('a tree the size of a real project passes the defaults and comes home', async () => {
    // 3,000 files of distinct content, eight levels deep, with long names.
    const files: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) {
      const dir = `packages/workspace-${i % 30}/src/${'nested-directory/'.repeat(5)}`;
      files[`${dir}module-${i}-with-a-long-descriptive-name.ts`] = `export const value${i} = ${i};\n`.repeat(20);
    }
    const { bundle, tip } = importCommit(w, files);
    const r = await importBundle({ cwd: w.work, bundle, base: w.base, target: FF });
    expect(r.tip).toBe(tip);
    expect(git(w.work, 'status', '--porcelain')).toBe('');
  });
});

describe('only a commit named HEAD is taken, and nothing is peeled', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
  });

  /** The agent points the sandbox's HEAD straight at `oid` (a tag, a tree, a blob) and exports base..HEAD. */
  function headAt(oid: string): string {
    writeFileSync(join(w.sandbox, '.git', 'HEAD'), `${oid}\n`);
    const bundle = join(w.dir, 'odd.bundle');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
    return bundle;
  }

  it('an annotated tag of a good commit: refused, the branch where it was', async () => {
    writeFileSync(join(w.sandbox, 'app.txt'), 'one\ntwo\n');
    git(w.sandbox, 'commit', '-q', '-am', 'agent: two');
    git(w.sandbox, 'tag', '-a', '-m', 'release', 'v1');
    const tag = git(w.sandbox, 'rev-parse', 'v1');
    const bundle = headAt(tag);
    expect(git(w.dir, 'bundle', 'list-heads', bundle)).toBe(`${tag} HEAD`);
    const kind = /^the sandbox's bundle's head [0-9a-f]{12} is an annotated tag, not a commit$/;
    await refused(w, { bundle }, kind);
    await refused(w, { bundle, target: PARK }, kind);
  });

  it('a tree, and a blob', async () => {
    await refused(w, { bundle: headAt(git(w.sandbox, 'rev-parse', `${w.base}^{tree}`)) }, /is a tree, not a commit$/);
    await refused(w, { bundle: headAt(git(w.sandbox, 'rev-parse', `${w.base}:app.txt`)) }, /is a blob, not a commit$/);
  });

  it('a head under another name', async () => {
    writeFileSync(join(w.sandbox, 'app.txt'), 'one\ntwo\n');
    git(w.sandbox, 'commit', '-q', '-am', 'agent: two');
    const bundle = join(w.dir, 'named.bundle');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..chalk/SHOP-1`);
    await refused(w, { bundle }, /^the sandbox's bundle's head is refs\/heads\/chalk\/SHOP-1, not HEAD$/);
  });
});

describe('a fast-forward that fails part way puts the branch, the index and the worktree back', () => {
  it('a path git cannot create, past files it already wrote, replaced and removed', async () => {
    const w = makeWorld('.husky');
    // The person's: tracked files, an ignored file, an untracked one.
    writeFileSync(join(w.work, '.gitignore'), 'secret.env\n');
    writeFileSync(join(w.work, 'a-kept.txt'), 'kept\n');
    writeFileSync(join(w.work, 'c-removed.txt'), 'removed by the tip\n');
    git(w.work, 'add', '-A');
    git(w.work, 'commit', '-q', '--no-verify', '-m', 'more files');
    const base = git(w.work, 'rev-parse', 'HEAD');
    writeFileSync(join(w.work, 'secret.env'), 'the person\n');
    writeFileSync(join(w.work, 'notes.txt'), 'untracked\n');
    git(w.sandbox, 'fetch', '-q', w.work, 'chalk/SHOP-1');
    git(w.sandbox, 'reset', '-q', '--hard', 'FETCH_HEAD');
    // The tip: one file changed, one removed, new ones before the deep path and after it.
    const { bundle } = importCommit(
      w,
      {
        'a-kept.txt': 'changed by the tip\n',
        'b-new/x.txt': 'new\n',
        [deepPath('deep', 2400)]: 'deep\n',
        'zz-after.txt': 'after\n',
      },
      { base, gone: ['c-removed.txt'] },
    );
    // A cap raised past what the file system holds (4,800 bytes > PATH_MAX): git fails part way.
    const line = await refused(
      { ...w, base },
      { bundle, base, limits: limits({ maxPathBytes: 100_000 }) },
      /^the fast-forward to [0-9a-f]{12} failed: .*\.\.\.; the branch and the worktree were put back$/,
    );
    expect(line).toContain('deep/a/a/a');
    expect(readFileSync(join(w.work, 'secret.env'), 'utf8')).toBe('the person\n');
    // Control: plain git leaves thousands of directories and a half-written tree behind.
    git(w.work, 'fetch', '-q', bundle, 'HEAD');
    const plain = spawnSync('git', ['merge', '--ff-only', '-q', 'FETCH_HEAD'], { cwd: w.work, stdio: 'ignore' });
    expect(plain.status).not.toBe(0);
    expect(existsSync(join(w.work, 'deep', 'a', 'a'))).toBe(true);
    expect(readFileSync(join(w.work, 'a-kept.txt'), 'utf8')).toBe('changed by the tip\n');
  });
});

describe('the fast-forward writes over and through nothing of the person', () => {
  let w: World;
  beforeEach(() => {
    w = makeWorld('.husky');
    writeFileSync(join(w.work, '.gitignore'), '.env\nbuild/\n');
    mkdirSync(join(w.work, 'config'));
    writeFileSync(join(w.work, 'config', 'app.yml'), 'app: 1\n');
    git(w.work, 'add', '-A');
    git(w.work, 'commit', '-q', '--no-verify', '-m', 'ignores');
    w.base = git(w.work, 'rev-parse', 'HEAD');
    git(w.sandbox, 'fetch', '-q', w.work, 'chalk/SHOP-1');
    git(w.sandbox, 'reset', '-q', '--hard', 'FETCH_HEAD');
  });

  /** The agent commits `files` (force-added, ignored or not) and removes `gone`, then exports. */
  function agentCommits(files: Record<string, string>, gone: string[] = []): string {
    for (const p of gone) git(w.sandbox, 'rm', '-r', '-q', p);
    for (const [p, content] of Object.entries(files)) {
      mkdirSync(join(w.sandbox, p, '..'), { recursive: true });
      writeFileSync(join(w.sandbox, p), content);
      git(w.sandbox, 'add', '-f', p);
    }
    git(w.sandbox, 'commit', '-q', '-m', 'agent');
    const bundle = join(w.dir, 'agent.bundle');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
    return bundle;
  }

  it("an ignored file of the person's that the tip adds (git would overwrite it)", async () => {
    writeFileSync(join(w.work, '.env'), 'TOKEN=the-persons\n');
    const bundle = agentCommits({ '.env': 'TOKEN=the-agents\n' });
    await refused(
      w,
      { bundle },
      /^the sandbox's work was not taken: it would replace "\.env", which git does not track in /,
    );
    // Control: plain git's fast-forward overwrites it without a word.
    git(w.work, 'fetch', '-q', bundle, 'HEAD');
    git(w.work, 'merge', '-q', '--ff-only', 'FETCH_HEAD');
    expect(readFileSync(join(w.work, '.env'), 'utf8')).toBe('TOKEN=the-agents\n');
  });

  it('an ignored file inside a tracked directory the tip turns into a file (git would remove it)', async () => {
    writeFileSync(join(w.work, 'config', 'secrets.yml'), 'the person\n');
    writeFileSync(join(w.work, '.gitignore'), '.env\nbuild/\nconfig/secrets.yml\n');
    git(w.work, 'commit', '-q', '--no-verify', '-am', 'ignore secrets');
    w.base = git(w.work, 'rev-parse', 'HEAD');
    git(w.sandbox, 'fetch', '-q', w.work, 'chalk/SHOP-1');
    git(w.sandbox, 'reset', '-q', '--hard', 'FETCH_HEAD');
    const bundle = agentCommits({}, ['config']);
    writeFileSync(join(w.sandbox, 'config'), 'now a file\n');
    git(w.sandbox, 'add', 'config');
    git(w.sandbox, 'commit', '-q', '--amend', '-m', 'agent');
    git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
    await refused(w, { bundle }, /it would replace "config\/secrets\.yml", which git does not track/);
    git(w.work, 'fetch', '-q', bundle, 'HEAD');
    git(w.work, 'merge', '-q', '--ff-only', 'FETCH_HEAD');
    expect(existsSync(join(w.work, 'config', 'secrets.yml'))).toBe(false);
  });

  it("a symlink of the person's where the tip puts a directory", async () => {
    const elsewhere = join(w.dir, 'elsewhere-build');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(w.work, 'build'));
    const bundle = agentCommits({ 'build/out.txt': 'through the link\n' });
    await refused(w, { bundle }, /"build" is in the way and is not a directory git tracks/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("the person's own changes to a file the tip changes", async () => {
    writeFileSync(join(w.work, 'app.txt'), 'the person was here\n');
    const bundle = agentCommits({ 'app.txt': 'the agent was here\n' });
    await refused(w, { bundle }, /^"app\.txt" has changes in .* that the sandbox's work would overwrite$/);
  });

  it('a tracked file the tip turns into a directory, and back, come home', async () => {
    const bundle = agentCommits({ 'app.txt/inside.txt': 'a directory now\n' }, ['app.txt']);
    await importBundle({ cwd: w.work, bundle, base: w.base, target: FF });
    expect(readFileSync(join(w.work, 'app.txt', 'inside.txt'), 'utf8')).toBe('a directory now\n');
    expect(git(w.work, 'status', '--porcelain')).toBe('');
  });
});

describe("the files `read` names come to inspect as git stores them, from the tree scan's listing", () => {
  it('a file, an executable, a symlink, a submodule, a non-ASCII name, a directory and a missing path', async () => {
    const w = makeWorld('.husky');
    const names = ['spec.md', 'run.sh', 'link', 'sub', 'spéc ✓.md', 'd', 'd/x', 'gone.md'];
    const tree = mktree(w, [
      ...baseEntries(w),
      entry('100644', blob(w, '# spec\n- [x] one\n'), 'spec.md'),
      `100755 blob ${blob(w, '#!/bin/sh\n')}\trun.sh`,
      `120000 blob ${blob(w, '../outside')}\tlink`,
      `160000 commit ${w.base}\tsub`,
      entry('100644', blob(w, 'ünïcode\n'), 'spéc ✓.md'),
      entry('040000', mktree(w, [entry('100644', blob(w, 'x\n'), 'x')]), 'd'),
    ]);
    const { bundle, tip } = commitTree(w, tree);
    let seen: readonly ({ mode: string; text: string } | null)[] = [];
    await expect(
      importBundle({
        cwd: w.work,
        bundle,
        base: w.base,
        target: FF,
        read: names,
        inspect: async (_tip, _changed, files) => {
          seen = files;
          return 'looked, and kept out';
        },
      }),
    ).rejects.toThrow(/looked, and kept out/);
    // As fileAt reads them from the tip, one git call each; a directory is no file (null).
    const expected = await Promise.all(names.map((path) => fileAt(w.sandbox, { rev: tip, path })));
    expect(expected[5]).toEqual({ mode: '040000', text: '' });
    expected[5] = null;
    expect(seen).toEqual(expected);
    expect(seen.slice(0, 5)).toEqual([
      { mode: '100644', text: '# spec\n- [x] one\n' },
      { mode: '100755', text: '#!/bin/sh\n' },
      { mode: '120000', text: '../outside' },
      { mode: '160000', text: '' },
      { mode: '100644', text: 'ünïcode\n' },
    ]);
    expect(seen.slice(6)).toEqual([{ mode: '100644', text: 'x\n' }, null]);
    expect(git(w.work, 'rev-parse', 'HEAD')).toBe(w.base);
  });
});
