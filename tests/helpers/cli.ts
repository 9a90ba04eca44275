import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../core/process/run.js';
import { embeddedPaths } from '../../core/store/embedded/paths.js';

export const CHALK_BIN = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'chalk.cjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `chalk` in `cwd` with a clean CHALK_* environment plus `env`. A call that names
 * no XDG_STATE_HOME gets this test file's own state directory, never the user's
 * ~/.local/state: a command that opens the store would start a database server there, which
 * outlived the tests, and files would share what earlier ones left.
 */
export function chalk(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined>; input?: string },
): CliResult {
  const r = spawnSync(process.execPath, [CHALK_BIN, ...args], {
    cwd: opts.cwd,
    env: chalkEnv(opts.env),
    encoding: 'utf8',
    input: opts.input ?? '',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `chalk`, not holding this process while it runs (a fake server in the test answers it). */
export function chalkAsync(
  args: string[],
  opts: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliResult> {
  return run(process.execPath, [CHALK_BIN, ...args], { cwd: opts.cwd, env: chalkEnv(opts.env) });
}

/** The environment of a `chalk` call: no CHALK_* or ANTHROPIC_* of this process, `env`, and a state directory. */
function chalkEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('CHALK_') && !k.startsWith('ANTHROPIC_')) base[k] = v;
  const all: NodeJS.ProcessEnv = { ...base, NO_COLOR: '1', ...env };
  all.XDG_STATE_HOME ??= fileState();
  return all;
}

/** The directories tempDir made in this test file, for stopTempDaemons. */
const made: string[] = [];

/** The state directory of this test file's `chalk` calls that name none (see `chalk`). */
let state: string | undefined;
function fileState(): string {
  state ??= tempDir('chalk-state-');
  return state;
}

export function tempDir(prefix = 'chalk-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/**
 * Stops the embedded database servers a `chalk` started for a state under a directory tempDir
 * made (XDG_STATE_HOME=<dir> or <dir>/state): a command that opens the store starts one, and it
 * runs until stopped. tests/setup.ts calls it after every test file.
 */
export async function stopTempDaemons(): Promise<void> {
  state = undefined;
  const dbs = made
    .splice(0)
    .flatMap((d) => [embeddedPaths({ XDG_STATE_HOME: d }), embeddedPaths({ XDG_STATE_HOME: join(d, 'state') })])
    .filter((db) => existsSync(db.pidFile));
  if (dbs.length === 0) return;
  // The store (pg and the rest) is loaded only by a file that started a server.
  const { stopEmbedded } = await import('../../core/store/index.js');
  for (const db of dbs) await stopEmbedded(db).catch(() => false);
}

/** A scratch git repository with one commit on `main`. */
export function scratchRepo(name = 'shop'): string {
  const dir = join(tempDir(), name);
  const git = (...a: string[]) => spawnSync('git', a, { cwd: dir, encoding: 'utf8' });
  spawnSync('mkdir', ['-p', dir]);
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@example.com');
  git('config', 'user.name', 'Test');
  git('commit', '-q', '--allow-empty', '-m', 'start');
  return dir;
}
