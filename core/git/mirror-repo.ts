import { chmodSync, lstatSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { arg, HostGitError, hostGitOk, isShallow } from './host-git.js';

/**
 * A sandbox mirror's repository, made by host git: a new bare repository holding the
 * history of one commit of the user's repository and nothing else (never another branch,
 * a stash, a reflog, the user's config or hooks), which a sandbox provider bakes into an
 * image layer; a sandbox started from it borrows those objects (alternates) and is streamed
 * only the ticket's commits since that commit (a thin bundle, `createBundle`'s `since`).
 */

/** The one ref a mirror has: its commit, so git in the sandbox knows where the borrowed history ends. */
export const MIRROR_REF = 'refs/heads/base';

/** Every directory 0755 and every file 0444: the sandbox's user reads the layer, nobody writes it. */
function readableByAll(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) throw new HostGitError(`the mirror holds a symlink (${path})`, 1, '');
  if (st.isDirectory()) {
    chmodSync(path, 0o755);
    for (const name of readdirSync(path)) readableByAll(join(path, name));
  } else chmodSync(path, 0o444);
}

/**
 * Makes a bare repository at `dir` (which must not exist) holding `commit`'s history from the
 * repository at `cwd`: one pack of exactly the objects `commit` reaches (`pack-objects --revs`,
 * which writes the pack and its index, reusing the repository's deltas), a second of its tree's
 * objects alone, whole and uncompressed, for checkouts; `MIRROR_REF` at `commit`, the
 * repository's object format; no hooks (`--template=`), no config of the user's.
 * Refused in a shallow repository, whose history stops at its boundary.
 */
export async function mirrorRepo(o: { cwd: string; commit: string; dir: string }): Promise<void> {
  const commit = arg(o.commit, 'commit');
  if (await isShallow(o.cwd)) {
    throw new HostGitError('a shallow repository has no whole history to mirror', 1, '');
  }
  const id = await hostGitOk(['rev-parse', '--verify', '--end-of-options', `${commit}^{commit}`], { cwd: o.cwd });
  const format = await hostGitOk(['rev-parse', '--show-object-format'], { cwd: o.cwd });
  await hostGitOk(['init', '--quiet', '--bare', '--template=', `--object-format=${format}`, o.dir], { cwd: o.cwd });
  const pack = join(o.dir, 'objects', 'pack', 'pack');
  const history = await hostGitOk(['pack-objects', '--revs', '--quiet', pack], { cwd: o.cwd, input: `${id}\n` });
  // The commit's tree again, whole and stored without compression: a checkout of it (a sandbox's
  // clone) copies bytes rather than inflate delta chains (half the time on the bench's history).
  const tree = await hostGitOk(['rev-parse', '--verify', '--end-of-options', `${id}^{tree}`], { cwd: o.cwd });
  const listed = await hostGitOk(['ls-tree', '-r', '-t', '-z', '--full-tree', id], { cwd: o.cwd });
  const objects = [tree];
  for (const entry of listed.split('\0')) {
    const m = /^\d{6} (blob|tree) ([0-9a-f]+)\t/.exec(entry);
    if (m) objects.push(m[2] as string);
  }
  await hostGitOk(['-c', 'pack.compression=0', 'pack-objects', '--window=0', '--no-reuse-object', '--quiet', pack], {
    cwd: o.cwd,
    input: `${objects.join('\n')}\n`,
  });
  // git reads the newest pack first: the history's is made older than the tree's.
  const older = new Date(Date.now() - 3600_000);
  for (const ext of ['pack', 'idx']) utimesSync(`${pack}-${history}.${ext}`, older, older);
  await hostGitOk(['--git-dir', o.dir, 'update-ref', MIRROR_REF, id], { cwd: o.dir });
  readableByAll(o.dir);
}
