import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readHostFile } from '../fs/host-file.js';
import type { CreatedBundle } from '../ports/host-git.js';
import { arg, HostGitError, hostGit, hostGitOk, isAncestor, oneLine } from './host-git.js';
import { bundleHeadsOf } from './pack-scan.js';

export type { CreatedBundle } from '../ports/host-git.js';

/**
 * Shallow history on the host: a repository cloned with `--depth` (as CI
 * checkouts are) lacks the parents of its boundary commits, which git lists in
 * its `shallow` file. A bundle made there holds no prerequisite for them, so a
 * receiver must be told the boundary, or it looks for those parents and fails
 * (`fatal: remote did not send all necessary objects`).
 */

const HEX_OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A shallow file is one object id per line; one this big is not one. */
const MAX_SHALLOW_BYTES = 1024 * 1024;

/** The object ids of a shallow file's text (anything but an object id per line is dropped). */
export function parseShallow(text: string): string[] {
  return [
    ...new Set(
      text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => HEX_OID.test(l)),
    ),
  ];
}

/**
 * The boundary commits of the repository at `cwd` that `ref`'s history reaches:
 * [] when the repository is not shallow.
 */
export async function shallowBoundary(cwd: string, ref?: string): Promise<string[]> {
  const shallow = await hostGitOk(['rev-parse', '--is-shallow-repository'], { cwd });
  if (shallow !== 'true') return [];
  const file = await hostGitOk(['rev-parse', '--path-format=absolute', '--git-path', 'shallow'], { cwd });
  const ids = readShallow(file);
  if (ids.length === 0 || ref === undefined) return ids;
  // Only the ones the ref's history reaches (a shallow history is short: its depth at most).
  const reached = new Set((await hostGitOk(['rev-list', '--end-of-options', ref], { cwd })).split('\n'));
  return ids.filter((id) => reached.has(id));
}

/** The commit ids a shallow file (at its absolute path) names; [] when there is none. */
export function readShallow(file: string): string[] {
  return parseShallow(readHostFile(file, MAX_SHALLOW_BYTES)?.toString('utf8') ?? '');
}

/** The repository's shallow file copied into `gitDir` (a quarantine that borrows its objects), when it has one. */
export async function copyShallow(fromCwd: string, gitDir: string): Promise<void> {
  const ids = await shallowBoundary(fromCwd);
  if (ids.length === 0) return;
  writeFileSync(join(gitDir, 'shallow'), `${ids.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * A bare repository at `dir` holding only the last commits of `ref` (fetched
 * with `--depth` from the worktree at `cwd`): `depth` commits below `keep`
 * (the commit the sandbox must have, where the ticket left its base) plus the
 * ticket's own. False when `keep` did not come with them (merges can put it
 * deeper than the first-parent count): the caller then takes the full history.
 */
export async function shallowCopy(o: {
  cwd: string;
  dir: string;
  ref: string;
  depth: number;
  keep: string | null;
}): Promise<boolean> {
  const own = o.keep
    ? Number(
        await hostGitOk(['rev-list', '--count', '--first-parent', '--end-of-options', `${o.keep}..${o.ref}`], {
          cwd: o.cwd,
        }),
      )
    : 0;
  await hostGitOk(['init', '--quiet', '--bare', '--template=', o.dir], { cwd: o.cwd });
  const fetched = await hostGit(
    ['fetch', '--quiet', '--no-tags', `--depth=${own + o.depth}`, '--end-of-options', o.cwd, `+${o.ref}:${o.ref}`],
    { cwd: o.dir },
  );
  if (fetched.code !== 0) return false;
  if (!o.keep) return true;
  const has = await hostGit(['cat-file', '-e', `${o.keep}^{commit}`], { cwd: o.dir });
  return has.code === 0;
}

/**
 * Writes a bundle of `ref`'s history to `out`, which must not exist yet (not
 * as a file, a directory or a symlink, dangling or not). git writes into a
 * fresh directory next to `out` and the file is hard-linked into place, which
 * fails rather than follow or replace anything planted at `out` meanwhile.
 * The history is the full one, or with `depth` the ticket's commits since
 * `keep` and `depth` commits below it (core/git/shallow.ts); in a shallow
 * repository, or with `depth`, `shallow` names the boundary commits the
 * receiver must mark shallow to take it. With `since` (a commit the receiver has, with its
 * history: a sandbox mirror's), the bundle is thin: only what `ref` has beyond `since`'s
 * history, `since` its prerequisite (its parents when it is `ref`'s tip, since git makes no
 * empty bundle); not with `depth`.
 */
export async function createBundle(o: {
  cwd: string;
  ref: string;
  out: string;
  depth?: number;
  keep?: string | null;
  since?: string;
}): Promise<CreatedBundle> {
  const exists = (() => {
    try {
      lstatSync(o.out);
      return true;
    } catch {
      return false;
    }
  })();
  if (exists) throw new HostGitError(`will not write the bundle: ${o.out} already exists`, 1, '');
  const ref = arg(o.ref, 'ref');
  if (o.since !== undefined && o.depth) throw new HostGitError('a bundle is either thin or shallow, not both', 2, '');
  const since = o.since ?? null;
  if (since !== null && !HEX_OID.test(since)) throw new HostGitError(`not an object id: '${oneLine(since)}'`, 2, '');
  const tmp = mkdtempSync(join(dirname(o.out), `.${basename(o.out)}.`));
  try {
    let from = o.cwd;
    if (o.depth !== undefined && o.depth > 0) {
      const copy = join(tmp, 'depth.git');
      if (await shallowCopy({ cwd: o.cwd, dir: copy, ref, depth: o.depth, keep: o.keep ?? null })) from = copy;
    }
    const file = join(tmp, `${randomBytes(8).toString('hex')}.bundle`);
    const made = await hostGit(['bundle', 'create', '--quiet', file, ref, ...(since ? [`^${since}`] : [])], {
      cwd: from,
    });
    if (made.code !== 0 && since && /empty bundle/.test(made.stderr)) {
      // `ref` is at `since`: the bundle holds that one commit, over its parents.
      await hostGitOk(['bundle', 'create', '--quiet', file, ref, '--not', `${since}^@`], { cwd: from });
    } else if (made.code !== 0) {
      throw new HostGitError(`git bundle failed (exit ${made.code}): ${oneLine(made.stderr)}`, made.code, made.stderr);
    }
    const heads = await bundleHeadsOf(file);
    if (!heads) throw new HostGitError(`the bundle of ${o.ref} has no header git writes`, 1, '');
    const head = heads[0];
    if (heads.length !== 1 || !head) throw new HostGitError(`the bundle of ${o.ref} has ${heads.length} heads`, 1, '');
    const [descends, shallow] = await Promise.all([
      since === null || isAncestor(o.cwd, { ancestor: since, descendant: head.sha }),
      shallowBoundary(from, ref),
    ]);
    // A thin bundle is only ever the rest of the history the receiver has: the head descends from `since`.
    if (!descends) throw new HostGitError(`${o.ref} (${head.sha}) does not descend from ${since}`, 1, '');
    try {
      linkSync(file, o.out);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new HostGitError(`will not write the bundle to ${o.out} (${code ?? 'error'})`, 1, '');
    }
    return { out: o.out, head: head.sha, ref: head.name, shallow };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
