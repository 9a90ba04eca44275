import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Sandbox } from '../ports/sandbox.js';
import { run } from '../process/run.js';
import { repoStateDir, runsDir } from '../run/layout.js';
import { alive, readPid } from '../store/embedded/pid.js';

/** Branch namespaces Chalk creates: ticket work, office hours, detention. */
const BRANCH_PREFIXES = ['refs/heads/chalk', 'refs/heads/tutoring', 'refs/heads/detention'];

/** Live run pids recorded under <state>/<repo>/runs/<TICKET>/pid. */
function liveRuns(repo: string): number[] {
  const dir = runsDir(repo);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((t) => readPid(join(dir, t, 'pid')))
    .filter((p): p is number => p !== null && p !== process.pid && alive(p));
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

export interface CleanupOptions {
  /** The main checkout's root. */
  root: string;
  repo: string;
  /** Also dirty worktrees, unmerged branches and the repository's whole state directory. */
  all: boolean;
  sandbox: Sandbox;
  say: (line: string) => void;
  warn: (line: string) => void;
}

/**
 * Stops this repository's runs, removes its labelled sandboxes, its clean ticket
 * worktrees and its merged chalk/, tutoring/ and detention/ branches, and its run
 * directories (`all`: everything of the repository's). Never the database.
 */
export async function cleanupRepository(o: CleanupOptions): Promise<void> {
  const git = (...args: string[]) => run('git', args, { cwd: o.root });
  await stopRuns(liveRuns(o.repo));
  const removed = await o.sandbox.removeLeftovers({ repo: o.repo });
  o.say(`stopped runs and removed sandboxes${removed.length ? ` (${removed.join(', ')})` : ''}`);

  const worktrees = `${o.root}.worktrees`;
  if (existsSync(worktrees)) {
    for (const name of readdirSync(worktrees)) {
      const dir = join(worktrees, name);
      const r = await git('worktree', 'remove', ...(o.all ? ['--force'] : []), dir);
      if (r.code !== 0) o.warn(`kept worktree with uncommitted changes: ${dir}`);
    }
  }
  await git('worktree', 'prune');

  const refs = await git('for-each-ref', '--format=%(refname:short)', ...BRANCH_PREFIXES);
  let kept = 0;
  for (const branch of refs.stdout.split('\n').filter(Boolean)) {
    const r = await git('branch', o.all ? '-D' : '-d', branch);
    if (r.code !== 0) kept++;
  }
  if (kept > 0) {
    o.say(`kept ${kept} branch(es) that are neither merged nor pushed; 'chalk cleanup --all' deletes them too`);
  }
  rmSync(o.all ? repoStateDir(o.repo) : runsDir(o.repo), { recursive: true, force: true });
  o.say('cleanup complete (telemetry database untouched)');
}
