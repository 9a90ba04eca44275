import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';
import { buildExamplePlugin } from '../helpers/example-plugin.js';

/**
 * examples/forge-plugin, compiled with tsc against the published declarations
 * (`chalk-harness/plugin` through package.json's exports), then loaded by the
 * real CLI from CHALK_PLUGINS: its key is validated and listed, its command
 * runs and shows in help, and CHALK_FORGE=file selects its forge.
 */
describe('the example third-party plugin', () => {
  let built: ReturnType<typeof buildExamplePlugin>;
  let repo: string;
  beforeAll(() => {
    built = buildExamplePlugin();
    repo = scratchRepo();
  });

  it('compiles against the published declarations with no error, and emits its own', () => {
    expect(built.tsc.output).toBe('');
    expect(built.tsc.code).toBe(0);
    expect(existsSync(built.entry)).toBe(true);
    expect(readFileSync(join(built.dir, 'dist', 'index.d.ts'), 'utf8')).toContain('chalk-harness/plugin');
  });

  it('its key is listed by chalk config with where it came from', () => {
    const dir = tempDir();
    const r = chalk(['config', '--json'], {
      cwd: repo,
      env: { CHALK_PLUGINS: built.entry, CHALK_FILE_FORGE_DIR: dir },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ key: string; value: string; source: string; plugin?: string }>;
    expect(rows.find((e) => e.key === 'CHALK_FILE_FORGE_DIR')).toMatchObject({ value: dir, source: 'env' });
  });

  it('a bad value of its key is one line naming the key, exit 1', () => {
    const r = chalk(['config'], {
      cwd: repo,
      env: { CHALK_PLUGINS: built.entry, CHALK_FILE_FORGE_DIR: 'relative/dir' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain("CHALK_FILE_FORGE_DIR must be an absolute directory path (got 'relative/dir')");
  });

  it('its command shows in help and runs', () => {
    const env = { CHALK_PLUGINS: built.entry, CHALK_FILE_FORGE_DIR: tempDir() };
    const help = chalk(['help'], { cwd: repo, env });
    expect(help.stdout).toContain('chalk file-forge list');
    const r = chalk(['file-forge', 'list'], { cwd: repo, env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`no requests in ${env.CHALK_FILE_FORGE_DIR}`);
  });

  it('CHALK_FORGE=file is accepted only with the plugin that offers it', () => {
    const without = chalk(['doctor'], { cwd: repo, env: { CHALK_FORGE: 'file' } });
    expect(without.code).toBe(1);
    expect(without.stderr).toBe(
      "chalk: CHALK_FORGE=file: no plugin offers a Forge named 'file' (offered: none, github, gitlab)\n",
    );
    const withIt = chalk(['doctor', '--json'], {
      cwd: repo,
      env: { CHALK_FORGE: 'file', CHALK_PLUGINS: built.entry, CHALK_FILE_FORGE_DIR: tempDir() },
    });
    expect(withIt.stderr).not.toContain('no plugin offers');
    expect(withIt.stdout).toContain('file');
  });
});
