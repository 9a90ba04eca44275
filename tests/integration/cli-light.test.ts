import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { chalk, scratchRepo, tempDir } from '../helpers/cli.js';

/**
 * `chalk status` runs from one bundled file, dist/cli/light.cjs (cli/light.ts, made by
 * scripts/bundle-light.mjs), with a V8 code cache kept in the state directory; every other
 * command runs from the module graph through main.js, and only those ever import a plugin.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const BUNDLE = join(ROOT, 'dist', 'cli', 'light.cjs');

/** No database to reach: status shows its tickets without numbers and says why once. */
const noDatabase = (state: string) => ({
  XDG_STATE_HOME: state,
  CHALK_DATABASE_URL: 'postgresql://chalk@127.0.0.1:1/none',
  CHALK_DB_TIMEOUT: '2',
});

/** A repository with a detention branch, so status has a ticket to show without a database. */
function repoWithTicket(): string {
  const repo = scratchRepo();
  spawnSync('git', ['branch', 'detention/SHOP-4-1700000000'], { cwd: repo });
  return repo;
}

describe('the bundle chalk status runs from', () => {
  it('requires nothing but node built-ins (and pg-native, which pg asks for only on pg.native), imports nothing at run time', () => {
    const code = readFileSync(BUNDLE, 'utf8');
    const required = new Set([...code.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]));
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    expect([...required].filter((m) => m !== undefined && !builtins.has(m))).toEqual(['pg-native']);
    // No other module is ever loaded: not Chalk's own (dist/core/plugin.js and the rest), not a plugin.
    expect(code).not.toMatch(/(?<![.\w$])import\s*\(/);
    expect(code).not.toMatch(/\bimport\.meta\b/);
  });

  it('answers like main.js, and keeps a private code cache in the state directory that it reuses', () => {
    const repo = repoWithTicket();
    const state = tempDir();
    const env = noDatabase(state);
    const first = chalk(['status', '--json'], { cwd: repo, env });
    expect(first.code, first.stderr).toBe(0);
    const cacheDir = join(state, 'chalk', 'code-cache');
    const [cache, ...more] = readdirSync(cacheDir);
    expect(more).toEqual([]);
    expect(cache).toMatch(/^light-[0-9a-f]{32}\.v8$/);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const file = join(cacheDir, cache as string);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const made = statSync(file).mtimeMs;

    const second = chalk(['status', '--json'], { cwd: repo, env });
    expect(second).toEqual(first);
    expect(statSync(file).mtimeMs).toBe(made); // used, not made again

    const viaMain = spawnSync(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), 'status', '--json'], {
      cwd: repo,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect({ code: viaMain.status, stdout: viaMain.stdout, stderr: viaMain.stderr }).toEqual(first);
    expect(JSON.parse(first.stdout).tickets).toEqual([expect.objectContaining({ ticket: 'SHOP-4', detentions: 1 })]);
  });

  it('a damaged cache changes nothing it prints, and is made again', () => {
    const repo = repoWithTicket();
    const state = tempDir();
    const env = noDatabase(state);
    const clean = chalk(['status'], { cwd: repo, env });
    const cacheDir = join(state, 'chalk', 'code-cache');
    const file = join(cacheDir, readdirSync(cacheDir)[0] as string);
    const garbage = Buffer.alloc(statSync(file).size, 0x5a);
    writeFileSync(file, garbage);
    const after = chalk(['status'], { cwd: repo, env });
    expect(after).toEqual(clean);
    expect(readFileSync(file).equals(garbage)).toBe(false);
  });

  it('bad arguments and --help read as from main.js', () => {
    const repo = repoWithTicket();
    const env = noDatabase(tempDir());
    const main = (args: string[]) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...args], {
        cwd: repo,
        env: { ...process.env, ...env, NO_COLOR: '1' },
        encoding: 'utf8',
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    for (const args of [
      ['status', 'extra'],
      ['status', '--nope'],
      ['status', '--help'],
    ]) {
      const r = chalk(args, { cwd: repo, env });
      expect({ args, ...r }).toEqual({ args, ...main(args) });
    }
    expect(chalk(['status', 'extra'], { cwd: repo, env })).toMatchObject({
      code: 2,
      stderr: 'chalk: Extraneous positional argument ("extra").\nusage: chalk status [--json]\n',
    });
    const help = chalk(['status', '--help'], { cwd: repo, env });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('$ chalk status [--json]');
  });

  it("a command's --help prints its usage, exit 0: a core command, a nested one, a built-in plugin's", async () => {
    // One function runs every command's class (cli/launch.ts): clipanion's help ran there without
    // the cli it prints through, and every `chalk <command> --help` failed alike.
    const repo = repoWithTicket();
    const env = noDatabase(tempDir());
    const { COMMANDS } = await import('../../cli/registry.js');
    const plugin = COMMANDS.find((c) => c.builtinPlugin);
    expect(plugin).toBeDefined();
    for (const path of [['config'], ['db', 'status'], plugin?.path ?? []]) {
      const r = chalk([...path, '--help'], { cwd: repo, env });
      expect({ path, code: r.code, stderr: r.stderr }).toEqual({ path, code: 0, stderr: '' });
      expect(r.stdout, path.join(' ')).toContain(`$ chalk ${path.join(' ')}`);
    }
  });

  it('without the bundle (a build by tsc alone), the binary runs chalk status from main.js alike', () => {
    const pkg = join(tempDir('chalk-no-bundle-'), 'chalk-harness');
    mkdirSync(pkg);
    cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'), 'dir');
    rmSync(join(pkg, 'dist', 'cli', 'light.cjs'));
    const repo = repoWithTicket();
    const state = tempDir();
    const env = noDatabase(state);
    const r = spawnSync(process.execPath, [join(pkg, 'dist', 'cli', 'chalk.cjs'), 'status', '--json'], {
      cwd: repo,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual(
      chalk(['status', '--json'], { cwd: repo, env: noDatabase(tempDir()) }),
    );
    expect(existsSync(join(state, 'chalk', 'code-cache'))).toBe(false);
  });
});

describe('plugins and the bundle', () => {
  /**
   * A plugin named in CHALK_PLUGINS (the environment: no trust needed) that notes, when it is
   * imported, the command and which file its `chalk-harness/plugin` is, and adds `chalk probe`.
   */
  let plugin: string;
  let notes: string;
  let repo: string;
  beforeAll(() => {
    const dir = tempDir('chalk-probe-plugin-');
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'chalk-harness'), 'dir');
    notes = join(dir, 'notes.jsonl');
    plugin = join(dir, 'probe.mjs');
    writeFileSync(
      plugin,
      `import { appendFileSync } from 'node:fs';
import { UserError } from 'chalk-harness/plugin';
appendFileSync(${JSON.stringify(notes)}, JSON.stringify({
  command: process.argv.slice(2).join(' '),
  entry: import.meta.resolve('chalk-harness/plugin'),
  userError: typeof UserError,
}) + '\\n');
export default {
  name: 'probe',
  commands: [{
    path: ['probe'],
    usage: 'chalk probe',
    load: (c) => class extends c.Command {
      static paths = [['probe']];
      async execute() { this.context.stdout.write('probed\\n'); }
    },
  }],
  register() {},
};
`,
    );
    repo = repoWithTicket();
  });
  const read = () =>
    existsSync(notes)
      ? readFileSync(notes, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
      : [];

  it('chalk status, run from the bundle, never imports a plugin CHALK_PLUGINS names', () => {
    rmSync(notes, { force: true });
    const env = { ...noDatabase(tempDir()), CHALK_PLUGINS: plugin };
    const r = chalk(['status'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SHOP-4\s+-\s+-\s+-\s+-\s+1/);
    expect(read()).toEqual([]);
  });

  it('commands that import it run from the module graph: its chalk-harness/plugin is the one file Chalk loads', () => {
    rmSync(notes, { force: true });
    const env = { ...noDatabase(tempDir()), CHALK_PLUGINS: plugin };
    expect(chalk(['probe'], { cwd: repo, env })).toMatchObject({ code: 0, stdout: 'probed\n' });
    expect(chalk(['config'], { cwd: repo, env }).code).toBe(0);
    expect(chalk(['help'], { cwd: repo, env }).stdout).toContain('chalk probe  (plugin probe)');
    const own = pathToFileURL(join(ROOT, 'dist', 'core', 'plugin.js')).href;
    expect(read()).toEqual(
      ['probe', 'config', 'help'].map((command) => ({ command, entry: own, userError: 'function' })),
    );
  });
});
