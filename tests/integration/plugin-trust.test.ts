import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * Plugin trust through the real CLI, played as the attacker: a repository (or an agent's
 * commit) names a plugin in .chalk/config whose import would run code on the host. The
 * "code" writes a sentinel file; the sentinel must not appear until someone on this
 * machine ran `chalk plugins trust`, and must not appear again once the plugin changed.
 */

let repo: string;
let sentinel: string;
let env: Record<string, string>;

/** A plugin whose top level writes the sentinel: importing it is running code on the host. */
const pluginSource = (marker: string) => `import { appendFileSync } from 'node:fs';
appendFileSync(${JSON.stringify(sentinel)}, ${JSON.stringify(`${marker}\n`)});
export default { name: 'evil', register() {} };
`;

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** `chalk decider status` boots a kernel and touches nothing else on the machine. */
const bootingCommand = () => chalk(['decider', 'status'], { cwd: repo, env });

const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
};

beforeEach(() => {
  repo = scratchRepo();
  const scratch = tempDir();
  sentinel = join(scratch, 'host-code-ran');
  env = { XDG_STATE_HOME: join(scratch, 'state') };
  mkdirSync(join(repo, '.chalk'), { recursive: true });
  writeFileSync(join(repo, '.chalk', 'evil.js'), pluginSource('v1'));
  writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_PLUGINS=./.chalk/evil.js\n');
});

describe('a plugin named in .chalk/config', () => {
  test('is refused with one line by every kernel-booting command, and never imported', () => {
    for (const args of [['decider', 'status'], ['doctor'], ['doctor', '--json']]) {
      const r = chalk(args, { cwd: repo, env });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(oneLine(r.stderr)).toBe(
        "chalk: plugin './.chalk/evil.js' named in .chalk/config is not trusted on this machine; review it, then run: chalk plugins trust",
      );
    }
    expect(existsSync(sentinel)).toBe(false);
    // nothing was started in the state directory either (doctor stops before its checks)
    expect(existsSync(join(env.XDG_STATE_HOME as string, 'chalk', 'db'))).toBe(false);
  });

  test('loads after chalk plugins trust, which itself imports nothing', () => {
    const list = chalk(['plugins', 'list', '--json'], { cwd: repo, env });
    expect(list.code).toBe(0);
    const real = join(repo, '.chalk', 'evil.js');
    expect(JSON.parse(list.stdout)).toEqual([
      { spec: './.chalk/evil.js', source: 'file', path: real, hash: sha256(pluginSource('v1')), status: 'untrusted' },
    ]);

    const trust = chalk(['plugins', 'trust'], { cwd: repo, env });
    expect(trust.stderr).toBe('');
    expect(trust.code).toBe(0);
    expect(trust.stdout).toBe(`trusted ./.chalk/evil.js  ${real}  ${sha256(pluginSource('v1'))}\n`);
    expect(existsSync(sentinel)).toBe(false);
    const record = join(env.XDG_STATE_HOME as string, 'chalk', 'plugins', 'trusted.json');
    expect(statSync(record).mode & 0o777).toBe(0o600);

    expect(chalk(['plugins', 'trust'], { cwd: repo, env }).stdout).toMatch(/^already trusted \.\/\.chalk\/evil\.js /);
    expect(JSON.parse(chalk(['plugins', 'list', '--json'], { cwd: repo, env }).stdout)[0].status).toBe('trusted');

    const r = bootingCommand();
    expect(r.stderr).not.toMatch(/plugin/);
    expect(readFileSync(sentinel, 'utf8')).toBe('v1\n');
  });

  test('is refused again once it changed, until trusted again', () => {
    expect(chalk(['plugins', 'trust'], { cwd: repo, env }).code).toBe(0);
    writeFileSync(join(repo, '.chalk', 'evil.js'), pluginSource('v2'));

    const r = bootingCommand();
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toBe(
      "chalk: plugin './.chalk/evil.js' named in .chalk/config changed since it was trusted on this machine; review it, then run: chalk plugins trust",
    );
    expect(existsSync(sentinel)).toBe(false);
    expect(chalk(['plugins', 'list'], { cwd: repo, env }).stdout).toMatch(/\.\/\.chalk\/evil\.js\s+file\s+CHANGED/);

    expect(chalk(['plugins', 'trust'], { cwd: repo, env }).stdout).toMatch(/^trusted /);
    bootingCommand();
    expect(readFileSync(sentinel, 'utf8')).toBe('v2\n');
  });

  test('is refused again after chalk plugins untrust', () => {
    chalk(['plugins', 'trust'], { cwd: repo, env });
    const u = chalk(['plugins', 'untrust'], { cwd: repo, env });
    expect(u.code).toBe(0);
    expect(u.stdout).toBe(`untrusted ./.chalk/evil.js  ${join(repo, '.chalk', 'evil.js')}\n`);
    expect(bootingCommand().code).toBe(1);
    expect(chalk(['plugins', 'untrust', './.chalk/evil.js'], { cwd: repo, env }).stdout).toMatch(
      /was not trusted on this machine/,
    );
    expect(existsSync(sentinel)).toBe(false);
  });

  test('is trusted by its real path when it is a symlink, and a retargeted link is refused', () => {
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'a.js'), pluginSource('a'));
    writeFileSync(join(elsewhere, 'b.js'), pluginSource('b'));
    rmSync(join(repo, '.chalk', 'evil.js'));
    symlinkSync(join(elsewhere, 'a.js'), join(repo, '.chalk', 'evil.js'));

    expect(chalk(['plugins', 'trust'], { cwd: repo, env }).stdout).toBe(
      `trusted ./.chalk/evil.js  ${join(elsewhere, 'a.js')}  ${sha256(pluginSource('a'))}\n`,
    );
    rmSync(join(repo, '.chalk', 'evil.js'));
    symlinkSync(join(elsewhere, 'b.js'), join(repo, '.chalk', 'evil.js'));
    const r = bootingCommand();
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/is not trusted on this machine; review it, then run: chalk plugins trust$/);
    expect(existsSync(sentinel)).toBe(false);
  });

  test('a package directory is hashed as a whole: a changed helper file needs a new trust', () => {
    const pkg = join(repo, 'tools', 'chalk-plugin');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{"name":"p","type":"module","exports":"./index.js"}');
    writeFileSync(join(pkg, 'index.js'), "import './helper.js';\nexport default { name: 'p', register() {} };\n");
    writeFileSync(join(pkg, 'helper.js'), '');
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_PLUGINS=./tools/chalk-plugin\n');
    expect(chalk(['plugins', 'trust'], { cwd: repo, env }).stdout).toMatch(/^trusted \.\/tools\/chalk-plugin /);
    expect(bootingCommand().stderr).not.toMatch(/plugin/);

    writeFileSync(join(pkg, 'helper.js'), pluginSource('helper'));
    const r = bootingCommand();
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^chalk: plugin '\.\/tools\/chalk-plugin' named in .chalk\/config changed since/);
    expect(existsSync(sentinel)).toBe(false);
  });

  test('chalk run --detach refuses it before handing the run to a background process', () => {
    const git = (...args: string[]) => expect(spawnSync('git', args, { cwd: repo }).status).toBe(0);
    git('checkout', '-q', '-b', 'chalk/SHOP-2');
    mkdirSync(join(repo, 'specs'));
    writeFileSync(join(repo, 'specs', 'SHOP-2.md'), '# SHOP-2: greet\n\n- [ ] greet prints hello\n');
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_PLUGINS=./.chalk/evil.js\nCHALK_TEST_CMD=true\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'plant a plugin');
    const r = chalk(['run', '--detach'], {
      cwd: repo,
      env: { ...env, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key' },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(oneLine(r.stderr)).toMatch(/^chalk: plugin '\.\/\.chalk\/evil\.js' named in \.chalk\/config is not trusted/);
    expect(existsSync(sentinel)).toBe(false);
  });

  test('chalk plugins trust refuses, with one line and nothing recorded, a plugin it cannot find', () => {
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_PLUGINS=./.chalk/evil.js,./gone.js\n');
    const r = chalk(['plugins', 'trust'], { cwd: repo, env });
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(/^chalk: plugin '\.\/gone\.js' failed to load: .* does not exist$/);
    expect(existsSync(join(env.XDG_STATE_HOME as string, 'chalk', 'plugins', 'trusted.json'))).toBe(false);
  });
});

describe('a plugin named in the environment', () => {
  test('loads without any trust, as before', () => {
    rmSync(join(repo, '.chalk', 'config'));
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'mine.js'), pluginSource('env'));
    const list = chalk(['plugins', 'list', '--json'], {
      cwd: repo,
      env: { ...env, CHALK_PLUGINS: join(elsewhere, 'mine.js') },
    });
    expect(JSON.parse(list.stdout)[0]).toMatchObject({ source: 'env', status: 'not-needed' });
    expect(existsSync(sentinel)).toBe(false);

    const r = chalk(['decider', 'status'], { cwd: repo, env: { ...env, CHALK_PLUGINS: join(elsewhere, 'mine.js') } });
    expect(r.stderr).not.toMatch(/plugin/);
    expect(readFileSync(sentinel, 'utf8')).toBe('env\n');
  });

  test('wins over .chalk/config, whose untrusted plugin is then not imported or refused', () => {
    const elsewhere = tempDir();
    writeFileSync(join(elsewhere, 'mine.mjs'), "export default { name: 'mine', register() {} };\n");
    const r = chalk(['decider', 'status'], { cwd: repo, env: { ...env, CHALK_PLUGINS: join(elsewhere, 'mine.mjs') } });
    expect(r.stderr).not.toMatch(/plugin/);
    expect(existsSync(sentinel)).toBe(false);
  });
});
