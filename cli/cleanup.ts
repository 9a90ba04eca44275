import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { Tokens } from '../core/kernel/tokens.js';
import { run } from '../core/process/run.js';
import { mainRoot, repoName, worktreeRoot } from '../core/repo/git.js';
import { repoStateDir, runsDir } from '../core/run/layout.js';
import { alive, readPid } from '../core/store/embedded/pid.js';
import { kernelContext } from './context.js';

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

export default class CleanupCommand extends Command {
  static override paths = [['cleanup']];
  static override usage = Command.Usage({
    description:
      'stop runs, remove sandboxes, worktrees and merged chalk/, tutoring/, detention/ branches (--all: also unmerged ones and all state); never the database',
  });
  all = Option.Boolean('--all', false);

  async execute(): Promise<number> {
    const out = (line: string) => this.context.stdout.write(`${line}\n`);
    if ((await worktreeRoot()) === null) throw new UserError('chalk cleanup runs inside a git repository');
    const root = await mainRoot();
    const repo = await repoName();
    const git = (...args: string[]) => run('git', args, { cwd: root });

    await stopRuns(liveRuns(repo));
    const { kernel } = await kernelContext();
    const removed = await kernel.resolve(Tokens.Sandbox).removeLeftovers({ repo });
    out(`stopped runs and removed sandboxes${removed.length ? ` (${removed.join(', ')})` : ''}`);

    const worktrees = `${root}.worktrees`;
    if (existsSync(worktrees)) {
      for (const name of readdirSync(worktrees)) {
        const dir = join(worktrees, name);
        const r = await git('worktree', 'remove', ...(this.all ? ['--force'] : []), dir);
        if (r.code !== 0) this.context.stderr.write(`warning: kept worktree with uncommitted changes: ${dir}\n`);
      }
    }
    await git('worktree', 'prune');

    const refs = await git('for-each-ref', '--format=%(refname:short)', ...BRANCH_PREFIXES);
    let kept = 0;
    for (const branch of refs.stdout.split('\n').filter(Boolean)) {
      const r = await git('branch', this.all ? '-D' : '-d', branch);
      if (r.code !== 0) kept++;
    }
    if (kept > 0) {
      out(`kept ${kept} branch(es) that are neither merged nor pushed; 'chalk cleanup --all' deletes them too`);
    }

    rmSync(this.all ? repoStateDir(repo) : runsDir(repo), { recursive: true, force: true });
    out('cleanup complete (telemetry database untouched)');
    return 0;
  }
}
