import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { hostGitPort } from '../git/port.js';
import { repoStateDir, runsDir } from '../layout.js';
import type { HostGit } from '../ports/host-git.js';
import type { Sandbox } from '../ports/sandbox.js';
import { alive, livePid } from '../process/pid.js';
import { mirrorRepoOf } from '../repo/git.js';
import { cleanSetupStates } from '../setup-cache/clean.js';

/** Branch namespaces Chalk creates: ticket work, office hours, detention. */
const BRANCH_PREFIXES = ['refs/heads/chalk', 'refs/heads/tutoring', 'refs/heads/detention'];

/** Live run pids recorded under <state>/<repo>/runs/<TICKET>/pid. */
function liveRuns(repo: string): number[] {
  const dir = runsDir(repo);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((t) => livePid(join(dir, t, 'pid')))
    .filter((p): p is number => p !== null && p !== process.pid);
}

async function stopRuns(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  // A run's own handlers remove its sandbox; give them a moment.
  for (let i = 0; i < 50 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
}

/**
 * Why a `tutoring/` branch is kept without `--all`, or null when it may go: it
 * goes once merged into the base branch or pushed (office hours' work is then
 * safe elsewhere).
 */
export function tutoringKeepReason(o: { merged: boolean; pushed: boolean; base: string }): string | null {
  if (o.merged || o.pushed) return null;
  return `not merged into ${o.base} and not pushed`;
}

/** Whether the branch's tip is in the base branch (local or origin's), and whether a remote-tracking ref holds it. */
async function tutoringFacts(git: HostGit, root: string, o: { branch: string; base: string }) {
  const tip = await git.resolveCommit(root, `refs/heads/${o.branch}`);
  if (!tip) return { merged: false, pushed: false };
  let merged = false;
  for (const ref of [`refs/heads/${o.base}`, `refs/remotes/origin/${o.base}`]) {
    if (!merged && (await git.refExists(root, ref)))
      merged = await git.isAncestor(root, { ancestor: tip, descendant: ref });
  }
  const pushed = (await git.remotesContaining(root, tip)).length > 0;
  return { merged, pushed };
}

export interface CleanupOptions {
  /** The main checkout's root. */
  root: string;
  repo: string;
  /** Also dirty worktrees, unmerged branches and the repository's whole state directory. */
  all: boolean;
  sandbox: Sandbox;
  /** What keys the setup cache (the setup command, the cache's directories). */
  config: Config;
  /** `CHALK_BASE_BRANCH`: a `tutoring/` branch merged into it goes. */
  baseBranch: string;
  say: (line: string) => void;
  warn: (line: string) => void;
  /** Host git (default: core/git). */
  git?: HostGit;
}

/**
 * Stops this repository's runs, removes its labelled sandboxes, its clean ticket
 * worktrees, its merged chalk/ and detention/ branches, its tutoring/ branches
 * that are merged or pushed (saying which it kept and why), its sandbox mirrors
 * but the newest (and those of repositories whose checkout is gone), and its run
 * directories (`all`: everything of the repository's). Never the database.
 */
export async function cleanupRepository(o: CleanupOptions): Promise<void> {
  const git = o.git ?? hostGitPort;
  await stopRuns(liveRuns(o.repo));
  const removed = await o.sandbox.removeLeftovers({ repo: o.repo });
  o.say(`stopped runs and removed sandboxes${removed.length ? ` (${removed.join(', ')})` : ''}`);

  const worktrees = `${o.root}.worktrees`;
  if (existsSync(worktrees)) {
    for (const name of readdirSync(worktrees)) {
      const dir = join(worktrees, name);
      if (!(await git.worktreeRemove(o.root, { path: dir, force: o.all })))
        o.warn(`kept worktree with uncommitted changes: ${dir}`);
    }
  }
  await git.worktreePrune(o.root);

  const refs = await git.forEachRef(o.root, BRANCH_PREFIXES).catch(() => []);
  let kept = 0;
  for (const branch of refs) {
    if (!o.all && branch.startsWith('tutoring/')) {
      const why = tutoringKeepReason({
        ...(await tutoringFacts(git, o.root, { branch, base: o.baseBranch })),
        base: o.baseBranch,
      });
      if (why) o.say(`kept ${branch}: ${why}`);
      else if (!(await git.deleteBranch(o.root, { name: branch, force: true })))
        o.say(`kept ${branch}: git would not delete it (checked out in a worktree?)`);
      continue;
    }
    if (!(await git.deleteBranch(o.root, { name: branch, force: o.all }))) kept++;
  }
  if (kept > 0) {
    o.say(`kept ${kept} branch(es) that are neither merged nor pushed; 'chalk cleanup --all' deletes them too`);
  }
  const states = await cleanSetupStates(
    { config: o.config, git, sandbox: o.sandbox },
    { repo: o.repo, root: o.root, baseBranch: o.baseBranch, all: o.all },
  );
  if (states.removed > 0 || states.kept > 0) {
    const mib = (states.bytes / (1024 * 1024)).toFixed(1);
    o.say(
      `removed ${states.removed} saved setup state(s) (${mib} MiB)${states.kept ? `; kept ${states.kept}: ${states.keptAs === 'current' ? `the one a sandbox of ${o.baseBranch} restores now` : 'the most recently used'}` : ''}`,
    );
  }
  if (o.sandbox.removeMirrors) {
    try {
      const gone = await o.sandbox.removeMirrors({
        repo: mirrorRepoOf(await git.commonDir(o.root)),
        all: o.all,
      });
      if (gone > 0) o.say(`removed ${gone} sandbox mirror image(s)${o.all ? '' : '; kept the newest'}`);
    } catch (err) {
      o.warn(`could not remove the sandbox mirrors: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  rmSync(o.all ? repoStateDir(o.repo) : runsDir(o.repo), { recursive: true, force: true });
  o.say('cleanup complete (telemetry database untouched)');
}
