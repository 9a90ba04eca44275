import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { DiffSummary, TreeEntry } from '../ports/host-git.js';
import { type RunOptions, type RunResult, run } from '../process/run.js';

/**
 * Host git: the only way core/ and cli/ run `git` on the user's machine.
 *
 * A repository's tree is hostile input (an agent commits to it, then the host
 * fast-forwards), so nothing it contains may execute here. Every call gets:
 * - `core.hooksPath=/dev/null`: git looks for hooks under /dev/null and finds none, whatever
 *   `.git/hooks/`, husky's `core.hooksPath=.husky` or a `.githooks/` setting says;
 * - `core.fsmonitor=false`: no fsmonitor program (which a config may point into the tree);
 * - `submodule.recurse=false`: no checkout, merge or fetch reaches into a submodule a tree names;
 * - for commands that can run an external diff or a textconv filter: `--no-ext-diff --no-textconv`;
 * - for push, commit and merge: `--no-verify` as well;
 * - for commands that check out, add, diff or compare worktree content (CONTENT_COMMANDS): every
 *   filter driver any configuration defines switched off (`filter.<name>.clean`, `.smudge` and
 *   `.process` empty, `.required` false), so a `.gitattributes` in the tree selects no program
 *   (git-lfs with a committed `.lfsconfig` among them). The names are read from git's own
 *   configuration for that directory first and passed through GIT_CONFIG_COUNT, which holds any
 *   name as it is.
 * The `-c` and GIT_CONFIG_COUNT settings reach every git process the command starts.
 */
const SAFE_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'submodule.recurse=false',
] as const;
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
  /** The filter drivers of `cwd`'s configuration, when the caller has read them (filterDrivers) already. */
  drivers?: readonly string[];
}

/**
 * Subcommands that may run a filter driver on content (checking it out, adding it, comparing the
 * worktree with the index): these run with every configured driver switched off. `git diff` is
 * not among them: host git only ever compares two commits with it, which reads no worktree file
 * (and runs no textconv or external diff: hostGitArgv).
 */
export const CONTENT_COMMANDS: ReadonlySet<string> = new Set([
  'add',
  'am',
  'apply',
  'blame',
  'checkout',
  'checkout-index',
  'cherry-pick',
  'commit',
  'diff-files',
  'diff-index',
  'grep',
  'hash-object',
  'merge',
  'pull',
  'read-tree',
  'rebase',
  'reset',
  'restore',
  'revert',
  'stash',
  'status',
  'switch',
  'update-index',
  'worktree',
]);

/** The settings that switch off the filter drivers `names` (`filter.<name>.*`). */
export function filterOffSettings(names: Iterable<string>): [string, string][] {
  const out: [string, string][] = [];
  for (const name of new Set(names)) {
    for (const key of ['clean', 'smudge', 'process']) out.push([`filter.${name}.${key}`, '']);
    out.push([`filter.${name}.required`, 'false']);
  }
  return out;
}

/** The filter drivers git's configuration defines for `cwd` (every scope, includes followed). */
export async function filterDrivers(cwd: string, env?: NodeJS.ProcessEnv): Promise<string[]> {
  const r = await run('git', [...SAFE_CONFIG, 'config', '-z', '--name-only', '--get-regexp', '^filter\\.'], {
    cwd,
    ...(env ? { env } : {}),
  });
  if (r.code !== 0) return [];
  // `filter.<name>.<key>`: the name is everything between the first and the last dot.
  return r.stdout
    .split('\0')
    .filter((k) => k.split('.').length >= 3)
    .map((k) => k.slice(k.indexOf('.') + 1, k.lastIndexOf('.')));
}

/** `env` (or this process's) with `settings` appended to any GIT_CONFIG_COUNT already there. */
export function withConfigEnv(settings: readonly [string, string][], env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const base = { ...(env ?? process.env) };
  const had = Number(base.GIT_CONFIG_COUNT ?? '0');
  let n = Number.isInteger(had) && had > 0 ? had : 0;
  for (const [key, value] of settings) {
    base[`GIT_CONFIG_KEY_${n}`] = key;
    base[`GIT_CONFIG_VALUE_${n}`] = value;
    n++;
  }
  base.GIT_CONFIG_COUNT = String(n);
  return base;
}

/** Runs host git in `cwd` and returns the result whatever the exit code. */
export async function hostGit(args: readonly string[], opts: HostGitOptions): Promise<RunResult> {
  const argv = hostGitArgv(args);
  const { drivers: known, ...rest } = opts;
  if (!CONTENT_COMMANDS.has(args[0] ?? '')) return run('git', argv, rest);
  const drivers = known ?? (await filterDrivers(opts.cwd, opts.env));
  if (drivers.length === 0) return run('git', argv, rest);
  return run('git', argv, { ...rest, env: withConfigEnv(filterOffSettings(drivers), opts.env) });
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
export function arg(value: string, what: string): string {
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

/**
 * `commonDir` and the full names of the refs under `prefix` (`refs/heads/detention/`), from one
 * git process (`chalk status` needs both: a process less to start is most of what they cost).
 * The refs come first: none has a newline, and the absolute directory after them is taken whole.
 */
export async function commonDirAndRefs(cwd: string, prefix: string): Promise<{ commonDir: string; refs: string[] }> {
  const glob = `${arg(prefix, 'ref prefix')}*`;
  const out = await hostGitOk(
    ['rev-parse', '--symbolic-full-name', `--glob=${glob}`, '--path-format=absolute', '--git-common-dir'],
    { cwd },
  );
  const all = out.split('\n');
  const at = all.findIndex((l) => !l.startsWith('refs/'));
  return { refs: all.slice(0, at < 0 ? all.length : at), commonDir: at < 0 ? '' : all.slice(at).join('\n').trim() };
}

/** The checked-out branch's short name, or null on a detached HEAD. */
export async function currentBranchName(cwd: string): Promise<string | null> {
  const r = await hostGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The branch `refs/remotes/origin/HEAD` points at (`master` for `origin/master`), or null when it is not set. */
export async function originHeadBranch(cwd: string): Promise<string | null> {
  const r = await hostGit(['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD'], { cwd });
  return r.code === 0 ? r.stdout.trim().replace(/^origin\//, '') || null : null;
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

/**
 * The files git's configuration for `cwd` includes (`include.path`, `includeIf.*.path`, whatever
 * the condition), as absolute paths: a relative one is resolved against the file that names it.
 * One inside a worktree puts that file's settings (`core.sshCommand`, `credential.helper`,
 * `filter.*`, `url.*.insteadOf`) in the tree's hands.
 */
export async function includedConfigFiles(cwd: string): Promise<string[]> {
  const r = await hostGit(['config', '-z', '--show-origin', '--get-regexp', '^include(if\\..*)?\\.path$'], { cwd });
  if (r.code !== 0) return [];
  const fields = r.stdout.split('\0');
  const out: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] ?? '';
    const value = (fields[i + 1] ?? '').split('\n').slice(1).join('\n');
    if (value === '') continue;
    if (value.startsWith('~/')) out.push(join(homedir(), value.slice(2)));
    else if (isAbsolute(value)) out.push(value);
    else if (origin.startsWith('file:')) out.push(resolve(cwd, dirname(origin.slice('file:'.length)), value));
  }
  return out;
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

/** Whether the repository is shallow (a CI checkout made with `--depth`): its history stops at a boundary. */
export async function isShallow(cwd: string): Promise<boolean> {
  return (await hostGitOk(['rev-parse', '--is-shallow-repository'], { cwd })) === 'true';
}

/** The repository's git common dir (absolute) and whether it is shallow, in one call. */
export async function repoLayout(cwd: string): Promise<{ commonDir: string; shallow: boolean }> {
  const out = await hostGitOk(['rev-parse', '--path-format=absolute', '--git-common-dir', '--is-shallow-repository'], {
    cwd,
  });
  const [commonDir = '', shallow = ''] = out.split('\n');
  if (commonDir === '' || (shallow !== 'true' && shallow !== 'false'))
    throw new HostGitError(`git rev-parse printed no common dir or shallow state`, 1, '');
  return { commonDir, shallow: shallow === 'true' };
}

/** Bytes on disk of the objects `to` has beyond `from`'s history (`rev-list --objects --disk-usage`). */
export async function historyBytes(cwd: string, o: { from: string; to: string }): Promise<number> {
  const out = await hostGitOk(
    ['rev-list', '--objects', '--disk-usage', '--end-of-options', arg(o.to, 'revision'), `^${arg(o.from, 'revision')}`],
    { cwd },
  );
  const n = Number(out);
  if (!Number.isSafeInteger(n)) throw new HostGitError(`git rev-list --disk-usage printed no size`, 1, '');
  return n;
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

/** Every path that differs between two commits (no rename detection: both sides of a rename). */
export async function changedPaths(cwd: string, o: { from: string; to: string }): Promise<string[]> {
  const out = await hostGitOk(
    ['diff', '--name-only', '-z', '--no-renames', arg(o.from, 'revision'), arg(o.to, 'revision'), '--'],
    { cwd },
  );
  return out.split('\0').filter((p) => p !== '');
}

/** Every file of `rev`'s tree at any depth (`git ls-tree -r -z --full-tree`): mode, object id and path. */
export async function treeEntries(cwd: string, rev: string): Promise<TreeEntry[]> {
  const out = await hostGitOk(['ls-tree', '-r', '-z', '--full-tree', arg(rev, 'revision')], { cwd });
  const entries: TreeEntry[] = [];
  for (const line of out.split('\0')) {
    const m = /^(\d{6}) \w+ ([0-9a-f]+)\t(.+)$/s.exec(line);
    if (m) entries.push({ mode: m[1] as string, oid: m[2] as string, path: m[3] as string });
  }
  return entries;
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
  return fileOfEntry(cwd, { mode, type, oid });
}

/** A tree entry's mode, its object's type (`blob`, `commit` for a submodule) and its id. */
export interface ListedEntry {
  mode: string;
  type: string;
  oid: string;
}

/** The file a tree entry names, as `fileAt` gives it: a blob's text, '' for anything else (a submodule). */
export async function fileOfEntry(cwd: string, entry: ListedEntry): Promise<{ mode: string; text: string }> {
  if (entry.type !== 'blob') return { mode: entry.mode, text: '' };
  const blob = await hostGit(['cat-file', 'blob', entry.oid], { cwd });
  if (blob.code !== 0) throw new HostGitError(`git cat-file failed (exit ${blob.code})`, blob.code, blob.stderr);
  return { mode: entry.mode, text: blob.stdout };
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

/**
 * Puts `paths` back, in the index and the worktree, as commit `from` has them (a path it does not
 * have is removed), and commits that alone with `message` (no hook). The worktree must be clean.
 * Returns the new commit, or null when there was nothing to put back. Paths are literal.
 */
export async function commitRestored(
  cwd: string,
  o: { from: string; paths: readonly string[]; message: string },
): Promise<string | null> {
  if (o.paths.length === 0) return null;
  const specs = o.paths.map((p) => `:(literal)${p}`);
  await hostGitOk(['restore', `--source=${arg(o.from, 'revision')}`, '--staged', '--worktree', '--', ...specs], {
    cwd,
  });
  const staged = await hostGit(['diff', '--cached', '--quiet'], { cwd });
  if (staged.code === 0) return null;
  // The person's identity when git has one, else Chalk's (as the sandbox's commits do).
  const env: Record<string, string> = {};
  if (!(await configGet(cwd, 'user.email'))) Object.assign(env, identity('EMAIL', 'chalk@localhost'));
  if (!(await configGet(cwd, 'user.name'))) Object.assign(env, identity('NAME', 'Chalk'));
  await hostGitOk(['commit', '--quiet', '--no-verify', '-m', o.message], { cwd, env: { ...process.env, ...env } });
  return revParse(cwd, 'HEAD');
}

const identity = (what: 'NAME' | 'EMAIL', value: string) => ({
  [`GIT_AUTHOR_${what}`]: value,
  [`GIT_COMMITTER_${what}`]: value,
});

/** Remote-tracking refs (`origin/x`) whose history holds `rev`: where it has been pushed. */
export async function remotesContaining(cwd: string, rev: string): Promise<string[]> {
  return lines(
    await hostGitOk(
      ['for-each-ref', '--format=%(refname:short)', `--contains=${arg(rev, 'revision')}`, '--', 'refs/remotes/'],
      { cwd },
    ),
  ).filter((r) => !r.endsWith('/HEAD'));
}
