import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import type { MirrorRepo, Sandbox } from '../../ports/sandbox.js';
import { mirrorRepoOf } from '../../repo/git.js';

/**
 * What a sandbox is cloned from. Streaming a repository's whole history into every sandbox
 * costs seconds on a long history (the sandbox indexes every object on one CPU); a mirror
 * (Sandbox.makeMirror) holds the history up to where the ticket left the base branch, once, in
 * the sandbox's image, and each start streams only what the ticket has beyond it.
 *
 * The sandbox must never get an object the ticket branch does not hold. A mirror is the history
 * of one commit, nothing else of the repository (host git's `mirrorRepo`); it is used only when
 * host git finds that commit an ancestor of the ticket branch, checked again against the head of
 * the bundle actually made (`createBundle`'s `since` refuses one whose head does not descend
 * from it), so a moved or rewritten base branch never lends a sandbox its old history. Mirrors are
 * found by the repository's own key (the SHA-256 of its main checkout's real path) and the image.
 */

/**
 * The base branch moved this far from a mirror (bytes of the objects between the mirror's commit
 * and the ticket's fork point, as stored): a new mirror is made at the fork point rather than
 * stream them on every start (about a tenth of a second of indexing per MiB in a one-CPU sandbox,
 * against a build paid once).
 */
export const MIRROR_STALE_BYTES = 4 * 1024 * 1024;

/** The mirror a sandbox starts from. */
export interface ChosenMirror {
  repo: MirrorRepo;
  base: string;
  /** This start made it (or made it anew). */
  built: boolean;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * The mirror a sandbox of the ticket branch starts from, or null (the sandbox gets the whole
 * history, as without mirrors): none when the sandbox has no mirrors, the repository is shallow,
 * CHALK_CLONE_DEPTH is set or the ticket left no base branch (`forkPoint`). The newest mirror
 * whose commit host git finds an ancestor of the branch is used, unless the base branch moved far
 * from it (MIRROR_STALE_BYTES of objects between them); then, or with none, one is made at
 * `forkPoint` (one line says so). A mirror that cannot be made costs a warning, never the run.
 * The caller's thin bundle (`createBundle`'s `since`) checks the ancestry again on its own head.
 */
export async function chooseMirror(o: {
  git: HostGit;
  sandbox: Pick<Sandbox, 'mirrors' | 'makeMirror'>;
  root: string;
  branch: string;
  /** Where the ticket left the base branch, as host git is reading it (the mirror's lookups go meanwhile). */
  forkPoint: Promise<string | null>;
  depth: number;
  log: Log;
}): Promise<ChosenMirror | null> {
  const { mirrors, makeMirror } = o.sandbox;
  if (!mirrors || !makeMirror || o.depth > 0) return null;
  const ref = `refs/heads/${o.branch}`;
  // The repository, whether it is shallow and the engine's mirrors, side by side.
  const found = Promise.all([o.git.repoLayout(o.root), mirrors.call(o.sandbox)]);
  found.catch(() => undefined);
  // Its failure is the caller's to say, not a mirror's.
  const forkPoint = await o.forkPoint;
  try {
    const [{ commonDir, shallow }, all] = await found;
    const repo = mirrorRepoOf(commonDir);
    if (!forkPoint || shallow) return null;
    for (const { base } of all.filter((m) => m.repo === repo.key)) {
      // The fork point is a merge base of HEAD, the branch: an ancestor by what it is.
      if (base === forkPoint) return { repo, base, built: false };
      if (!(await o.git.isAncestor(o.root, { ancestor: base, descendant: ref }))) continue;
      if ((await o.git.historyBytes(o.root, { from: base, to: forkPoint })) <= MIRROR_STALE_BYTES)
        return { repo, base, built: false };
      break;
    }
    const { built } = await makeMirror.call(o.sandbox, {
      repo,
      base: forkPoint,
      fill: (dir) => o.git.mirrorRepo({ cwd: o.root, commit: forkPoint, dir }),
      onBuild: (line) => o.log.info(line),
    });
    return { repo, base: forkPoint, built };
  } catch (err) {
    o.log.warn(`no sandbox mirror for this start (${describe(err)}); the sandbox gets the whole history`);
    return null;
  }
}
