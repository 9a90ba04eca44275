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
