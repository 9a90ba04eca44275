import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdtempSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CreatedBundle, DiffSummary } from '../ports/host-git.js';
import { type RunOptions, type RunResult, run } from '../process/run.js';

/**
 * Host git: the only way core/ and cli/ run `git` on the user's machine.
 *
 * A repository's tree is hostile input (an agent commits to it, then the host
 * fast-forwards), so nothing it contains may execute here. Every call gets:
 * - `core.hooksPath=/dev/null`: git looks for hooks under /dev/null and finds none, whatever
 *   `.git/hooks/`, husky's `core.hooksPath=.husky` or a `.githooks/` setting says;
 * - `core.fsmonitor=false`: no fsmonitor program (which a config may point into the tree);
 * - for commands that can run an external diff or a textconv filter: `--no-ext-diff --no-textconv`;
 * - for push, commit and merge: `--no-verify` as well.
 * The `-c` settings reach every git process the command starts (through GIT_CONFIG_PARAMETERS).
 */
const SAFE_CONFIG = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'] as const;
const DIFF_COMMANDS: ReadonlySet<string> = new Set(['diff', 'log', 'show', 'diff-tree', 'diff-index', 'diff-files']);
const VERIFY_COMMANDS: ReadonlySet<string> = new Set(['push', 'commit', 'merge']);

/** The full argv for `git <args>` with the host's safety settings put in front of and after the subcommand. */
export function hostGitArgv(args: readonly string[]): string[] {
  const [sub, ...rest] = args;
  if (sub === undefined) throw new Error('host git needs a subcommand');
  const extra: string[] = [];
  if (DIFF_COMMANDS.has(sub)) extra.push('--no-ext-diff', '--no-textconv');
  if (VERIFY_COMMANDS.has(sub)) extra.push('--no-verify');
  return [...SAFE_CONFIG, sub, ...extra, ...rest];
}

/** A host git command that failed: the message is one line (`git fetch failed (exit 128): ...`). */
export class HostGitError extends Error {
  override name = 'HostGitError';
  constructor(
    message: string,
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** Control characters (a repository's or a sandbox's text) never reach a message. */
export function oneLine(text: string): string {
  const first = text.trim().split('\n')[0] ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return first.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

export interface HostGitOptions extends Pick<RunOptions, 'input' | 'env' | 'timeoutMs'> {
  cwd: string;
}

/** Runs host git in `cwd` and returns the result whatever the exit code. */
export function hostGit(args: readonly string[], opts: HostGitOptions): Promise<RunResult> {
  return run('git', hostGitArgv(args), opts);
}

/** Runs host git and returns its trimmed stdout, or throws a HostGitError with git's first line. */
export async function hostGitOk(args: readonly string[], opts: HostGitOptions): Promise<string> {
  const r = await hostGit(args, opts);
  if (r.code !== 0) {
    const why = oneLine(r.stderr) || oneLine(r.stdout);
    throw new HostGitError(`git ${args[0]} failed (exit ${r.code})${why ? `: ${why}` : ''}`, r.code, r.stderr);
  }
  return r.stdout.trim();
}

const lines = (s: string) => s.split('\n').filter((l) => l.trim() !== '');

/** A rev, ref or branch name a caller passes on: never an option. */
function arg(value: string, what: string): string {
  if (value === '' || value.startsWith('-')) throw new HostGitError(`not a valid ${what}: '${oneLine(value)}'`, 2, '');
  return value;
}

/** `git rev-parse --verify REV`: the object id, or a HostGitError. */
export function revParse(cwd: string, rev: string): Promise<string> {
  return hostGitOk(['rev-parse', '--verify', '--end-of-options', arg(rev, 'revision')], { cwd });
}

/** The commit `rev` names, or null when it names none (an option-like `rev` names none). */
export async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  if (rev === '' || rev.startsWith('-')) return null;
  const r = await hostGit(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${arg(rev, 'revision')}^{commit}`],
    {
      cwd,
    },
  );
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Whether the full ref (`refs/heads/x`) exists. */
export async function refExists(cwd: string, ref: string): Promise<boolean> {
  if (ref === '' || ref.startsWith('-')) return false;
  const r = await hostGit(['rev-parse', '--verify', '--quiet', '--end-of-options', arg(ref, 'ref')], { cwd });
  return r.code === 0;
}

/** `git rev-parse --show-toplevel`, or null outside a worktree. */
export async function showToplevel(cwd: string): Promise<string | null> {
  const r = await hostGit(['rev-parse', '--show-toplevel'], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The repository's git common dir, absolute (the same from every linked worktree). */
export function commonDir(cwd: string): Promise<string> {
  return hostGitOk(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd });
}

/** The checked-out branch's short name, or null on a detached HEAD. */
export async function currentBranchName(cwd: string): Promise<string | null> {
  const r = await hostGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The URL of remote `name`, or null when there is none. */
export async function remoteUrl(cwd: string, name: string): Promise<string | null> {
  const r = await hostGit(['remote', 'get-url', '--', arg(name, 'remote')], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** `git config --get KEY`, or null when unset. */
export async function configGet(cwd: string, key: string): Promise<string | null> {
  const r = await hostGit(['config', '--get', '--', arg(key, 'config key')], { cwd });
  return r.code === 0 ? r.stdout.replace(/\n$/, '') : null;
}

/** `git status --porcelain` lines (empty when clean), or null when git could not read the worktree. */
export async function statusPorcelain(cwd: string): Promise<string[] | null> {
  const r = await hostGit(['status', '--porcelain'], { cwd });
  return r.code === 0 ? lines(r.stdout) : null;
}

/** Short names of the refs under the given prefixes (`refs/heads/detention/`). */
export async function forEachRef(cwd: string, prefixes: readonly string[]): Promise<string[]> {
  const patterns = prefixes.map((p) => arg(p, 'ref prefix'));
  return lines(await hostGitOk(['for-each-ref', '--format=%(refname:short)', '--', ...patterns], { cwd }));
}

/** Creates branch `name` at commit `at`; fails if the branch exists (one atomic update-ref). */
export async function createBranch(cwd: string, o: { name: string; at: string }): Promise<void> {
  const sha = await revParse(cwd, `${arg(o.at, 'revision')}^{commit}`);
  // The all-zero old value makes the update create-only.
  const zero = '0'.repeat(sha.length);
  await hostGitOk(['update-ref', '-m', 'chalk: create branch', `refs/heads/${arg(o.name, 'branch')}`, sha, zero], {
    cwd,
  });
}

/** `git branch -d` (merged only) or `-D`: whether the branch was deleted. */
export async function deleteBranch(cwd: string, o: { name: string; force: boolean }): Promise<boolean> {
  const r = await hostGit(['branch', o.force ? '-D' : '-d', '--end-of-options', arg(o.name, 'branch')], { cwd });
  return r.code === 0;
}

/** `git worktree add -b BRANCH PATH BASE`; throws a HostGitError with git's line. */
export async function worktreeAdd(cwd: string, o: { path: string; branch: string; base: string }): Promise<void> {
  await hostGitOk(
    ['worktree', 'add', '--quiet', '-b', arg(o.branch, 'branch'), '--', o.path, arg(o.base, 'revision')],
    { cwd },
  );
}

/** `git worktree remove [--force] PATH`: whether it was removed. */
export async function worktreeRemove(cwd: string, o: { path: string; force: boolean }): Promise<boolean> {
  const r = await hostGit(['worktree', 'remove', ...(o.force ? ['--force'] : []), '--', o.path], { cwd });
  return r.code === 0;
}

export async function worktreePrune(cwd: string): Promise<void> {
  await hostGit(['worktree', 'prune'], { cwd });
}

/** `git push --quiet --no-verify [-u] REMOTE BRANCH`: the result, for the caller to show what the remote said. */
export function push(cwd: string, o: { remote: string; branch: string; setUpstream?: boolean }): Promise<RunResult> {
  return hostGit(
    [
      'push',
      '--quiet',
      ...(o.setUpstream ? ['-u'] : []),
      '--end-of-options',
      arg(o.remote, 'remote'),
      arg(o.branch, 'branch'),
    ],
    { cwd },
  );
}

export interface NumstatEntry {
  path: string;
  /** null for a binary file. */
  added: number | null;
  deleted: number | null;
}

/** `git diff --numstat FROM TO` (no external diff, no textconv), or null when git could not compare them. */
export async function diffNumstat(cwd: string, o: { from: string; to: string }): Promise<NumstatEntry[] | null> {
  const r = await hostGit(['diff', '--numstat', arg(o.from, 'revision'), arg(o.to, 'revision'), '--'], { cwd });
  if (r.code !== 0) return null;
  return lines(r.stdout).map((l) => {
    const [add = '-', del = '-', ...path] = l.split('\t');
    const binary = add === '-';
    return { path: path.join('\t'), added: binary ? null : Number(add), deleted: binary ? null : Number(del) };
  });
}

/** `git merge-base --is-ancestor`: whether `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(cwd: string, o: { ancestor: string; descendant: string }): Promise<boolean> {
  const r = await hostGit(
    ['merge-base', '--is-ancestor', '--end-of-options', arg(o.ancestor, 'revision'), arg(o.descendant, 'revision')],
    { cwd },
  );
  if (r.code === 0) return true;
  if (r.code === 1) return false;
  throw new HostGitError(`git merge-base failed (exit ${r.code}): ${oneLine(r.stderr)}`, r.code, r.stderr);
}

/** `git bundle list-heads FILE`: each head's object id and name. */
export async function bundleHeads(cwd: string, file: string): Promise<{ sha: string; name: string }[]> {
  const out = await hostGitOk(['bundle', 'list-heads', file], { cwd });
  return lines(out).map((l) => {
    const i = l.indexOf(' ');
    return i < 0 ? { sha: l, name: '' } : { sha: l.slice(0, i), name: l.slice(i + 1) };
  });
}

export type { CreatedBundle } from '../ports/host-git.js';

/**
 * Writes a bundle of `ref`'s full history to `out`, which must not exist yet
 * (not as a file, a directory or a symlink, dangling or not). git writes into
 * a fresh directory next to `out` and the file is hard-linked into place, which
 * fails rather than follow or replace anything planted at `out` meanwhile.
 */
export async function createBundle(o: { cwd: string; ref: string; out: string }): Promise<CreatedBundle> {
  const exists = (() => {
    try {
      lstatSync(o.out);
      return true;
    } catch {
      return false;
    }
  })();
  if (exists) throw new HostGitError(`will not write the bundle: ${o.out} already exists`, 1, '');
  const tmp = mkdtempSync(join(dirname(o.out), `.${basename(o.out)}.`));
  try {
    const file = join(tmp, `${randomBytes(8).toString('hex')}.bundle`);
    await hostGitOk(['bundle', 'create', '--quiet', file, arg(o.ref, 'ref')], { cwd: o.cwd });
    const heads = await bundleHeads(o.cwd, file);
    const head = heads[0];
    if (heads.length !== 1 || !head) throw new HostGitError(`the bundle of ${o.ref} has ${heads.length} heads`, 1, '');
    try {
      linkSync(file, o.out);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new HostGitError(`will not write the bundle to ${o.out} (${code ?? 'error'})`, 1, '');
    }
    return { out: o.out, head: head.sha, ref: head.name };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Every path that differs between two commits (no rename detection: both sides of a rename). */
export async function changedPaths(cwd: string, o: { from: string; to: string }): Promise<string[]> {
  const out = await hostGitOk(
    ['diff', '--name-only', '-z', '--no-renames', arg(o.from, 'revision'), arg(o.to, 'revision'), '--'],
    { cwd },
  );
  return out.split('\0').filter((p) => p !== '');
}

/** A file of a commit as git stores it: its mode (`100644`, `120000` for a symlink, ...) and text; null when absent. */
export async function fileAt(
  cwd: string,
  o: { rev: string; path: string },
): Promise<{ mode: string; text: string } | null> {
  const ls = await hostGitOk(['ls-tree', '-z', arg(o.rev, 'revision'), '--', o.path], { cwd });
  const entry = ls.split('\0')[0] ?? '';
  const m = /^(\d{6}) (\w+) ([0-9a-f]+)\t/.exec(entry);
  if (!m) return null;
  const [, mode, type, oid] = m as unknown as [string, string, string, string];
  if (type !== 'blob') return { mode, text: '' };
  const blob = await hostGit(['cat-file', 'blob', oid], { cwd });
  if (blob.code !== 0) throw new HostGitError(`git cat-file failed (exit ${blob.code})`, blob.code, blob.stderr);
  return { mode, text: blob.stdout };
}

/** `git merge-base A B`: their best common ancestor, or null when they have none (or one is unknown). */
export async function mergeBase(cwd: string, o: { a: string; b: string }): Promise<string | null> {
  const r = await hostGit(['merge-base', '--end-of-options', arg(o.a, 'revision'), arg(o.b, 'revision')], { cwd });
  return r.code === 0 ? r.stdout.trim() || null : null;
}

/** `git log --format=%H %s -n MAX REV`: the newest `max` commits reachable from `rev`, newest first. */
export async function recentCommits(
  cwd: string,
  o: { rev: string; max: number },
): Promise<{ sha: string; subject: string }[]> {
  const out = await hostGitOk(
    ['log', '--format=%H%x1f%s', `--max-count=${Math.max(1, Math.floor(o.max))}`, arg(o.rev, 'revision'), '--'],
    { cwd },
  );
  return lines(out).map((l) => {
    const i = l.indexOf('\x1f');
    return i < 0 ? { sha: l, subject: '' } : { sha: l.slice(0, i), subject: l.slice(i + 1) };
  });
}

/**
 * What changed between two commits: `git diff --stat` and the first `maxLines`
 * lines of `git diff` (no external diff, no textconv), with the diff's full line count.
 */
export async function diffSummary(
  cwd: string,
  o: { from: string; to: string; maxLines: number },
): Promise<DiffSummary> {
  const range = [arg(o.from, 'revision'), arg(o.to, 'revision'), '--'];
  const stat = await hostGitOk(['diff', '--stat', ...range], { cwd });
  const full = (await hostGitOk(['diff', ...range], { cwd })).split('\n');
  const all = full.length === 1 && full[0] === '' ? [] : full;
  return { stat, diff: all.slice(0, Math.max(0, o.maxLines)).join('\n'), lines: all.length };
}

/** `git switch -c NAME`: a new branch at HEAD, checked out (the worktree stays as it is). */
export async function switchNewBranch(cwd: string, name: string): Promise<void> {
  await hostGitOk(['switch', '--quiet', '--no-track', '-c', arg(name, 'branch')], { cwd });
}

/** Remote-tracking refs (`origin/x`) whose history holds `rev`: where it has been pushed. */
export async function remotesContaining(cwd: string, rev: string): Promise<string[]> {
  return lines(
    await hostGitOk(
      ['for-each-ref', '--format=%(refname:short)', `--contains=${arg(rev, 'revision')}`, '--', 'refs/remotes/'],
      { cwd },
    ),
  ).filter((r) => !r.endsWith('/HEAD'));
}
