import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../core/errors.js';
import { resolvePlugin } from '../../core/kernel/plugin-loader.js';
import {
  assertPluginTrusted,
  PLUGIN_MAX_FILES,
  pluginHash,
  pluginTrustFile,
  readPluginTrust,
  trustPlugin,
  trustState,
  untrustPlugin,
} from '../../core/kernel/plugin-trust.js';

let dir: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'chalk-plugin-trust-')));
  env = { XDG_STATE_HOME: join(dir, 'state') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function writePackage(root: string, files: Record<string, string>): string {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

const pkgFiles = {
  'package.json': '{"name":"acme","type":"module","exports":"./index.js"}',
  'index.js': 'export default { name: "acme", register() {} };\n',
  'lib/util.js': 'export const x = 1;\n',
};

describe('pluginHash', () => {
  it('is the sha256 of a single file, what sha256sum prints', () => {
    writeFileSync(join(dir, 'x.js'), 'export default {};\n');
    expect(pluginHash({ spec: './x.js', trustPath: join(dir, 'x.js') })).toBe(sha256('export default {};\n'));
  });

  it('covers every file of a package (path and bytes), in sorted order', () => {
    const a = writePackage(join(dir, 'a'), pkgFiles);
    const hash = pluginHash({ spec: 'a', trustPath: a });
    const expected = createHash('sha256');
    for (const rel of ['index.js', 'lib/util.js', 'package.json']) {
      const text = pkgFiles[rel as keyof typeof pkgFiles];
      expected.update(`${rel}\0${Buffer.byteLength(text)}\0`).update(text);
    }
    expect(hash).toBe(`sha256:${expected.digest('hex')}`);
    // the same content elsewhere hashes the same; the path is what trust adds
    expect(pluginHash({ spec: 'b', trustPath: writePackage(join(dir, 'b'), pkgFiles) })).toBe(hash);
  });

  it('changes when any file changes, is added or is renamed', () => {
    const a = writePackage(join(dir, 'a'), pkgFiles);
    const before = pluginHash({ spec: 'a', trustPath: a });
    writeFileSync(join(a, 'lib', 'util.js'), 'export const x = 2;\n');
    const edited = pluginHash({ spec: 'a', trustPath: a });
    expect(edited).not.toBe(before);
    writeFileSync(join(a, 'lib', 'more.js'), '');
    const added = pluginHash({ spec: 'a', trustPath: a });
    expect(added).not.toBe(edited);
    rmSync(join(a, 'lib', 'more.js'));
    writeFileSync(join(a, 'lib', 'mor.js'), '');
    expect(pluginHash({ spec: 'a', trustPath: a })).not.toBe(added);
  });

  it('leaves node_modules/ and .git/ out', () => {
    const a = writePackage(join(dir, 'a'), pkgFiles);
    const before = pluginHash({ spec: 'a', trustPath: a });
    writePackage(a, { 'node_modules/dep/index.js': 'x', '.git/HEAD': 'ref', 'lib/node_modules/y.js': 'y' });
    expect(pluginHash({ spec: 'a', trustPath: a })).toBe(before);
  });

  it('refuses a package holding a symlink or a FIFO, with one line', () => {
    const a = writePackage(join(dir, 'a'), pkgFiles);
    writeFileSync(join(dir, 'outside.js'), 'evil');
    symlinkSync(join(dir, 'outside.js'), join(a, 'lib', 'link.js'));
    expect(() => pluginHash({ spec: 'a', trustPath: a })).toThrow(
      `plugin 'a': lib/link.js in ${a} is a symbolic link; a package Chalk trusts holds regular files only`,
    );
    rmSync(join(a, 'lib', 'link.js'));
    execFileSync('mkfifo', [join(a, 'fifo')]);
    expect(() => pluginHash({ spec: 'a', trustPath: a })).toThrow(/fifo in .* is not a regular file/);
  });

  it(`refuses a package over ${PLUGIN_MAX_FILES} files`, () => {
    const a = join(dir, 'many');
    mkdirSync(a);
    for (let i = 0; i <= PLUGIN_MAX_FILES; i++) writeFileSync(join(a, `f${i}.js`), '');
    expect(() => pluginHash({ spec: 'many', trustPath: a })).toThrow(
      `plugin 'many' has over ${PLUGIN_MAX_FILES} files outside node_modules/; Chalk will not hash or trust it`,
    );
  });

  it('refuses a plugin over 50 MiB', () => {
    const big = join(dir, 'big.js');
    writeFileSync(big, Buffer.alloc(50 * 1024 * 1024 + 1));
    expect(() => pluginHash({ spec: './big.js', trustPath: big })).toThrow(/^plugin '\.\/big\.js' is over 50 MiB/);
  });
});

describe('resolvePlugin', () => {
  it('keys a symlinked file by its real path', () => {
    writeFileSync(join(dir, 'real.js'), 'export default {};\n');
    mkdirSync(join(dir, 'repo', '.chalk'), { recursive: true });
    symlinkSync(join(dir, 'real.js'), join(dir, 'repo', '.chalk', 'p.js'));
    const p = resolvePlugin('./.chalk/p.js', join(dir, 'repo'));
    expect(p).toMatchObject({ kind: 'file', trustPath: join(dir, 'real.js'), entry: join(dir, 'real.js') });
  });

  it('keys a package directory, and a package by name, by its real root', () => {
    const pkg = writePackage(join(dir, 'acme'), pkgFiles);
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'node_modules'), { recursive: true });
    symlinkSync(pkg, join(repo, 'node_modules', 'acme'));
    expect(resolvePlugin('./node_modules/acme', repo)).toMatchObject({ kind: 'package', trustPath: pkg });
    expect(resolvePlugin('acme', repo)).toMatchObject({
      kind: 'package',
      trustPath: pkg,
      entry: join(pkg, 'index.js'),
    });
  });

  it('refuses a package directory whose entry point is outside it', () => {
    writeFileSync(join(dir, 'evil.js'), '');
    writePackage(join(dir, 'pkg'), { 'package.json': '{"name":"pkg","main":"../evil.js"}' });
    expect(() => resolvePlugin('./pkg', dir)).toThrow(/its entry point .*evil\.js is outside the package/);
  });
});

describe('the trust record', () => {
  const plugin = (hash: string) => ({ spec: './x.js', trustPath: join(dir, 'x.js'), hash });
  const h1 = sha256('one');
  const h2 = sha256('two');

  it('starts empty, then trusts a path and hash, once', () => {
    expect(readPluginTrust(env)).toEqual([]);
    expect(trustState(plugin(h1), readPluginTrust(env))).toBe('untrusted');
    expect(trustPlugin(plugin(h1), { env, now: new Date('2025-01-02T03:04:05Z') })).toBe(true);
    expect(trustPlugin(plugin(h1), { env })).toBe(false);
    expect(readPluginTrust(env)).toEqual([
      { path: join(dir, 'x.js'), hash: h1, spec: './x.js', trustedAt: '2025-01-02T03:04:05.000Z' },
    ]);
    expect(trustState(plugin(h1), readPluginTrust(env))).toBe('trusted');
  });

  it('says changed for a known path with another hash; a new trust replaces the old hash', () => {
    trustPlugin(plugin(h1), { env });
    expect(trustState(plugin(h2), readPluginTrust(env))).toBe('changed');
    expect(trustPlugin(plugin(h2), { env })).toBe(true);
    expect(readPluginTrust(env).map((e) => e.hash)).toEqual([h2]);
    expect(trustState(plugin(h1), readPluginTrust(env))).toBe('changed');
  });

  it('does not trust the same content at another path', () => {
    trustPlugin(plugin(h1), { env });
    expect(trustState({ trustPath: join(dir, 'y.js'), hash: h1 }, readPluginTrust(env))).toBe('untrusted');
  });

  it('is written with mode 0600 in a 0700 directory, and no temporary file is left', () => {
    trustPlugin(plugin(h1), { env });
    const file = pluginTrustFile(env);
    expect(file).toBe(join(dir, 'state', 'chalk', 'plugins', 'trusted.json'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ version: 1 });
    expect(execFileSync('ls', [join(file, '..')], { encoding: 'utf8' }).trim()).toBe('trusted.json');
  });

  it('untrusts a path', () => {
    trustPlugin(plugin(h1), { env });
    expect(untrustPlugin(join(dir, 'x.js'), env)).toBe(true);
    expect(untrustPlugin(join(dir, 'x.js'), env)).toBe(false);
    expect(readPluginTrust(env)).toEqual([]);
  });

  it('refuses a damaged record with one line instead of trusting nothing or everything', () => {
    mkdirSync(join(pluginTrustFile(env), '..'), { recursive: true });
    writeFileSync(pluginTrustFile(env), '{"version":1,"plugins":[{"path":"/x"}]}');
    expect(() => readPluginTrust(env)).toThrow(UserError);
    writeFileSync(pluginTrustFile(env), 'not json');
    expect(() => readPluginTrust(env)).toThrow(/is not a plugin trust record; delete it and run chalk plugins trust/);
  });
});

describe('assertPluginTrusted', () => {
  it('passes trusted content and refuses new or changed content with one line naming the plugin', () => {
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, '.chalk'), { recursive: true });
    writeFileSync(join(repo, '.chalk', 'p.js'), 'export default {};\n');
    const resolved = resolvePlugin('./.chalk/p.js', repo);
    expect(() => assertPluginTrusted(resolved, readPluginTrust(env))).toThrow(
      "plugin './.chalk/p.js' named in .chalk/config is not trusted on this machine; review it, then run: chalk plugins trust",
    );
    trustPlugin({ ...resolved, hash: pluginHash(resolved) }, { env });
    expect(() => assertPluginTrusted(resolved, readPluginTrust(env))).not.toThrow();
    writeFileSync(join(repo, '.chalk', 'p.js'), 'export default { changed: true };\n');
    expect(() => assertPluginTrusted(resolved, readPluginTrust(env))).toThrow(
      "plugin './.chalk/p.js' named in .chalk/config changed since it was trusted on this machine; review it, then run: chalk plugins trust",
    );
  });
});
