import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/cli.js';

/**
 * The world the host-git tests play in: the user's repository with the ticket
 * branch checked out, a bare origin, the sandbox's clone, hooks that leave
 * marks, and another repository with a bundle of its own.
 */

/** Test-side git: plain git, hooks and all, so the controls show the hooks are live. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}
export const gitCode = (cwd: string, ...args: string[]) => spawnSync('git', args, { cwd, encoding: 'utf8' }).status;

export const HOOKS = ['post-merge', 'post-checkout', 'pre-push', 'reference-transaction', 'pre-commit', 'post-rewrite'];
export const HOOK_DIRS = ['.husky', '.githooks', '.git/hooks'] as const;
export type HookDir = (typeof HOOK_DIRS)[number];

export interface World {
  dir: string;
  /** The user's repository, with the ticket branch checked out. */
  work: string;
  origin: string;
  /** The sandbox's clone. */
  sandbox: string;
  /** Where hooks leave their marks. */
  sentinels: string;
  base: string;
  /** Another repository on the host, with its own bundle. */
  other: { dir: string; bundle: string; commit: string; blob: string };
}

export function writeHooks(dir: string, sentinels: string, tag: string): void {
  mkdirSync(dir, { recursive: true });
  for (const h of HOOKS) {
    writeFileSync(join(dir, h), `#!/bin/sh\ntouch '${sentinels}/${tag}-${h}'\nexit 0\n`);
    chmodSync(join(dir, h), 0o755);
  }
}

/** The hooks the agent committed (`.husky/`, `.githooks/`) and the user's own (`.git/hooks/`), one set active. */
export function makeWorld(active: HookDir): World {
  const dir = tempDir('chalk-host-git-');
  const sentinels = join(dir, 'sentinels');
  mkdirSync(sentinels);
  const origin = join(dir, 'origin.git');
  git(dir, 'init', '-q', '--bare', '-b', 'main', origin);
  const work = join(dir, 'shop');
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'config', 'user.email', 'test@example.com');
  git(work, 'config', 'user.name', 'Test');
  writeFileSync(join(work, 'app.txt'), 'one\n');
  writeHooks(join(work, '.husky'), sentinels, 'husky');
  writeHooks(join(work, '.githooks'), sentinels, 'githooks');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'start');
  git(work, 'remote', 'add', 'origin', origin);
  git(work, 'checkout', '-q', '-b', 'chalk/SHOP-1');
  writeHooks(join(work, '.git', 'hooks'), sentinels, 'githooks-dir');
  if (active !== '.git/hooks') git(work, 'config', 'core.hooksPath', active);
  const base = git(work, 'rev-parse', 'HEAD');

  const sandbox = join(dir, 'sandbox');
  git(dir, 'clone', '-q', '--no-local', '-b', 'chalk/SHOP-1', work, sandbox);
  git(sandbox, 'config', 'user.email', 'agent@example.com');
  git(sandbox, 'config', 'user.name', 'Agent');

  const otherDir = join(dir, 'elsewhere');
  mkdirSync(otherDir);
  git(otherDir, 'init', '-q', '-b', 'main');
  git(otherDir, 'config', 'user.email', 'x@example.com');
  git(otherDir, 'config', 'user.name', 'X');
  writeFileSync(join(otherDir, 'secret.txt'), `another repository's secret ${dir}\n`);
  git(otherDir, 'add', '-A');
  git(otherDir, 'commit', '-q', '-m', 'private history');
  const otherBundle = join(dir, 'elsewhere.bundle');
  git(otherDir, 'bundle', 'create', '-q', otherBundle, 'main');
  const other = {
    dir: otherDir,
    bundle: otherBundle,
    commit: git(otherDir, 'rev-parse', 'HEAD'),
    blob: git(otherDir, 'rev-parse', 'HEAD:secret.txt'),
  };
  // Everything above was set up with plain git: start counting from nothing.
  for (const f of readdirSync(sentinels)) spawnSync('rm', ['-f', join(sentinels, f)]);
  return { dir, work, origin, sandbox, sentinels, base, other };
}

/** The agent's work in the sandbox, exported the way a sandbox does: base..HEAD. */
export function agentWork(w: World, name = 'out.bundle'): { bundle: string; tip: string } {
  writeFileSync(join(w.sandbox, 'app.txt'), 'one\ntwo\n');
  git(w.sandbox, 'commit', '-q', '-am', 'agent: two');
  const bundle = join(w.dir, name);
  git(w.sandbox, 'bundle', 'create', '-q', bundle, `${w.base}..HEAD`);
  return { bundle, tip: git(w.sandbox, 'rev-parse', 'HEAD') };
}

export const marks = (w: World) => readdirSync(w.sentinels).sort();
export const refsOf = (w: World) => ({
  refs: git(w.work, 'for-each-ref', '--format=%(refname) %(objectname)'),
  head: git(w.work, 'symbolic-ref', 'HEAD'),
  sha: git(w.work, 'rev-parse', 'HEAD'),
});
