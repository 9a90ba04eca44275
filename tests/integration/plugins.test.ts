import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../core/config/config.js';
import { bootKernel } from '../../core/kernel/boot.js';
import { ConsoleLog } from '../../core/kernel/console-log.js';
import { Tokens } from '../../core/kernel/tokens.js';
import { BUILTIN_PLUGINS } from '../../plugins/builtin.js';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/** A third-party plugin, written as its own npm package that imports nothing from Chalk. */
function writePluginPackage(dir: string, name = 'chalk-plugin-acme'): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', type: 'module', exports: './index.js' }, null, 2),
  );
  writeFileSync(
    join(dir, 'index.js'),
    `import { appendFileSync } from 'node:fs';
export default {
  name: 'acme',
  register(kernel) {
    kernel.bind('Forge', { useValue: {
      name: 'acme',
      opensRequests: true,
      async status() { return { cli: 'acme-cli 9.9', loggedIn: true }; },
      async openRequest(req) { return { url: 'https://forge.acme.test/' + req.branch }; },
    } });
    kernel.hooks.onDetain.tapPromise('acme', async (event) => {
      appendFileSync(process.env.ACME_DETENTIONS, JSON.stringify(event) + '\\n');
    });
  },
};
`,
  );
  return dir;
}

describe('third-party plugins through CHALK_PLUGINS', () => {
  test('a package by name from .chalk/config replaces the Forge binding and taps onDetain', async () => {
    const repo = scratchRepo();
    const pkg = writePluginPackage(join(tempDir(), 'chalk-plugin-acme'));
    mkdirSync(join(repo, 'node_modules'), { recursive: true });
    symlinkSync(pkg, join(repo, 'node_modules', 'chalk-plugin-acme'));
    mkdirSync(join(repo, '.chalk'));
    writeFileSync(join(repo, '.chalk', 'config'), 'CHALK_PLUGINS=chalk-plugin-acme\nCHALK_FORGE=github\n');

    const detentions = join(tempDir(), 'detentions.jsonl');
    process.env.ACME_DETENTIONS = detentions;
    const config = loadConfig({ root: repo, env: {} });
    // Named in .chalk/config: refused until trusted on this machine (here, a scratch state directory).
    const state = { XDG_STATE_HOME: join(tempDir(), 'state') };
    const boot = () => bootKernel({ config, log: new ConsoleLog(), builtins: BUILTIN_PLUGINS, env: state });
    await expect(boot()).rejects.toThrow(
      "plugin 'chalk-plugin-acme' named in .chalk/config is not trusted on this machine; review it, then run: chalk plugins trust",
    );
    const trusted = chalk(['plugins', 'trust'], { cwd: repo, env: state });
    expect(trusted.stdout).toMatch(new RegExp(`^trusted chalk-plugin-acme  ${pkg}  sha256:[0-9a-f]{64}\n$`));
    const kernel = await boot();
    expect(kernel.plugins).toContain('acme');
    const forge = kernel.resolve(Tokens.Forge);
    expect(forge.name).toBe('acme');
    expect(kernel.boundByPlugin(Tokens.Forge)).toBe('acme');
    expect(
      await forge.openRequest({ repoRoot: repo, branch: 'chalk/T-1', base: 'main', title: 't', body: 'b' }),
    ).toEqual({
      url: 'https://forge.acme.test/chalk/T-1',
    });

    await kernel.hooks.onDetain.promise({
      ticket: 'SHOP-7',
      kind: 'failed',
      reason: 'rubric failed 3 times',
      branch: 'detention/SHOP-7-1',
      lessonId: 4,
      next: 'fix it',
    });
    expect(JSON.parse(readFileSync(detentions, 'utf8'))).toMatchObject({ ticket: 'SHOP-7', lessonId: 4 });
  });

  test('a path from the environment works through the real CLI', () => {
    const repo = scratchRepo();
    const pkg = writePluginPackage(join(tempDir(), 'acme'));
    const r = chalk(['doctor', '--json'], { cwd: repo, env: { CHALK_PLUGINS: pkg, ACME_DETENTIONS: '/dev/null' } });
    const report = JSON.parse(r.stdout) as { checks: Array<{ status: string; label: string }> };
    expect(report.checks).toContainEqual({ status: 'ok', label: 'acme-cli 9.9 (acme)' });
  });

  const failures: Array<[string, (dir: string) => string, RegExp]> = [
    [
      'a missing package',
      () => 'chalk-plugin-nope',
      /^chalk: plugin 'chalk-plugin-nope' failed to load: package not found; install it/,
    ],
    ['a missing path', (dir) => join(dir, 'gone'), /^chalk: plugin '.*gone' failed to load: .* does not exist$/],
    [
      'a module that throws on import',
      (dir) => {
        writeFileSync(join(dir, 'throws.mjs'), "throw new Error('needs ACME_TOKEN');\n");
        return join(dir, 'throws.mjs');
      },
      /^chalk: plugin '.*throws\.mjs' failed to load: needs ACME_TOKEN$/,
    ],
    [
      'a module without register',
      (dir) => {
        writeFileSync(join(dir, 'shape.mjs'), "export default { name: 'x' };\n");
        return join(dir, 'shape.mjs');
      },
      /^chalk: plugin '.*shape\.mjs' failed to load: it must export default \{ name, configuration\?, commands\?, register\(kernel\) \}/,
    ],
  ];
  for (const [name, make, expected] of failures) {
    test(`${name} stops the command with one line naming the plugin and why`, () => {
      const repo = scratchRepo();
      const spec = make(tempDir());
      const r = chalk(['doctor'], { cwd: repo, env: { CHALK_PLUGINS: spec } });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr.trimEnd()).toMatch(expected);
    });
  }
});

/**
 * A third-party plugin package that declares what it adds: a repository key (with a zod
 * schema, zod being the package's own dependency), a secret machine key, a command built on
 * the clipanion Chalk hands it, and a forge offered by name for CHALK_FORGE to choose.
 */
function writeDeclaringPlugin(dir: string): string {
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  symlinkSync(join(import.meta.dirname, '..', '..', 'node_modules', 'zod'), join(dir, 'node_modules', 'zod'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'chalk-plugin-bitbox', version: '1.0.0', type: 'module', exports: './index.js' }),
  );
  writeFileSync(
    join(dir, 'index.js'),
    `import { z } from 'zod';
export default {
  name: 'bitbox',
  configuration: [
    {
      name: 'BITBOX_REGION', scope: 'repo', default: 'eu', help: 'Where bitbox opens requests',
      schema: z.string().refine((v) => ['eu', 'us'].includes(v), {
        error: (i) => "BITBOX_REGION must be 'eu' or 'us' (got '" + i.input + "')",
      }),
    },
    { name: 'BITBOX_TOKEN', scope: 'machine', default: '', help: 'bitbox API token', schema: z.string(), secret: true },
  ],
  commands: [
    {
      path: ['bitbox', 'hello'],
      usage: 'chalk bitbox hello [NAME]',
      load: ({ Command, Option }) =>
        class Hello extends Command {
          static paths = [['bitbox', 'hello']];
          who = Option.String({ required: false });
          async execute() {
            this.context.stdout.write('hello ' + (this.who ?? 'world') + ' from ' + this.context.config.str('BITBOX_REGION') + '\\n');
            return 0;
          }
        },
    },
  ],
  register(kernel) {
    kernel.offer('Forge', 'bitbox', { useFactory: () => ({
      name: 'bitbox',
      opensRequests: true,
      async status() { return { cli: 'bitbox-cli 1.2 ' + kernel.config.str('BITBOX_REGION'), loggedIn: true }; },
      async openRequest(req) { return { url: 'https://bitbox.test/' + req.branch }; },
    }) });
  },
};
`,
  );
  return dir;
}

describe('a plugin that declares keys, a command and a forge, named in the environment', () => {
  const setup = () => {
    const repo = scratchRepo();
    const pkg = writeDeclaringPlugin(join(tempDir(), 'chalk-plugin-bitbox'));
    return { repo, env: { CHALK_PLUGINS: pkg } };
  };

  test('chalk config lists its keys with their source and the plugin; the file may set its repository key', () => {
    const { repo, env } = setup();
    mkdirSync(join(repo, '.chalk'));
    writeFileSync(join(repo, '.chalk', 'config'), 'BITBOX_REGION=us\nBITBOX_TOKEN=from-the-repo\n');
    const r = chalk(['config', '--json'], { cwd: repo, env: { ...env, BITBOX_TOKEN: 'tok-5e3c1a' } });
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ key: string; value: string; source: string; plugin: string }>;
    expect(rows.find((x) => x.key === 'BITBOX_REGION')).toMatchObject({
      value: 'us',
      source: 'file',
      plugin: 'bitbox',
    });
    expect(rows.find((x) => x.key === 'BITBOX_TOKEN')).toMatchObject({
      value: '********',
      source: 'env',
      plugin: 'bitbox',
    });
    expect(rows.find((x) => x.key === 'CHALK_IMAGE')).toMatchObject({ plugin: 'sandbox-docker' });
    expect(r.stdout).not.toContain('tok-5e3c1a');
    // The machine key in the file is the only unknown one: the repository key is the plugin's.
    expect(r.stderr).toBe("warning: ignoring BITBOX_TOKEN in .chalk/config: only this machine's environment sets it\n");
    const table = chalk(['config'], { cwd: repo, env }).stdout;
    expect(table).toMatch(/^BITBOX_REGION\s+us\s+file\s+bitbox$/m);
  });

  test('a bad value of its key is one line naming where it came from, for config and for the doctor', () => {
    const { repo, env } = setup();
    const line = "BITBOX_REGION must be 'eu' or 'us' (got 'mars') [from the environment]";
    const r = chalk(['config'], { cwd: repo, env: { ...env, BITBOX_REGION: 'mars' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`chalk: ${line}\n`);
    const doctor = chalk(['doctor', '--json'], { cwd: repo, env: { ...env, BITBOX_REGION: 'mars' } });
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.stdout) as { checks: Array<{ status: string; label: string; detail?: string }> };
    expect(report.checks).toContainEqual({ status: 'FAIL', label: 'configuration', detail: line });
  });

  test('chalk help shows its command, and the command runs with the configuration', () => {
    const { repo, env } = setup();
    const help = chalk(['help'], { cwd: repo, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Plugins\n  chalk bitbox hello [NAME]  (plugin bitbox)\n');
    expect(chalk(['help'], { cwd: repo }).stdout).not.toContain('bitbox');
    const r = chalk(['bitbox', 'hello', 'ada'], { cwd: repo, env: { ...env, BITBOX_REGION: 'us' } });
    expect(r).toMatchObject({ code: 0, stdout: 'hello ada from us\n', stderr: '' });
    const unknown = chalk(['bitbox', 'goodbye'], { cwd: repo, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^chalk: unknown command 'bitbox goodbye'\n/);
  });

  test('CHALK_FORGE=bitbox selects its forge; a name nothing offers is one line listing the offered ones', () => {
    const { repo, env } = setup();
    const r = chalk(['doctor', '--json'], { cwd: repo, env: { ...env, CHALK_FORGE: 'bitbox', BITBOX_REGION: 'us' } });
    const report = JSON.parse(r.stdout) as { checks: Array<{ status: string; label: string }> };
    expect(report.checks).toContainEqual({ status: 'ok', label: 'bitbox-cli 1.2 us (bitbox)' });
    const bad = chalk(['doctor'], { cwd: repo, env: { ...env, CHALK_FORGE: 'bitbucket' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      "chalk: CHALK_FORGE=bitbucket: no plugin offers a Forge named 'bitbucket' (offered: none, github, gitlab, bitbox)\n",
    );
  });
});
