import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { openCount } from '../spec/checkpoints.js';
import { refuseLiveRun } from './claim.js';
import { resolveContext } from './context.js';
import type { RunDeps } from './deps.js';
import { type Graduation, graduate } from './graduation.js';

/** Why `chalk submit` refuses a spec with open checkpoints, or null when none is open. */
export function openCheckpointsRefusal(spec: string, open: number): string | null {
  if (open === 0) return null;
  return `${spec} has ${open} open checkpoint${open === 1 ? '' : 's'}; finish ${open === 1 ? 'it' : 'them'} (chalk run) or tick ${open === 1 ? 'it' : 'them'}, commit, then chalk submit`;
}

/**
 * `chalk submit`: when every checkpoint of the ticket's spec is ticked, push
 * the branch and open the request whatever `CHALK_AUTO_MR` says (the person
 * asked for it). Makes no agent call, so needs no agent credential; refuses a
 * detention branch (office hours resolves it first) and a ticket with a live run.
 */
export async function submitTicket(deps: RunDeps, o: { root: string | null }): Promise<Graduation> {
  if (!o.root) throw new UserError('chalk submit works inside a git worktree: cd into the ticket worktree');
  const branch = await deps.git.currentBranchName(o.root);
  if (branch?.startsWith('detention/')) {
    throw new UserError(
      `${branch} holds a detained attempt: fix it, commit, then chalk office-hours -m "what was wrong"`,
    );
  }
  const ctx = await resolveContext({
    root: o.root,
    config: deps.config,
    env: deps.env,
    git: deps.git,
    needCredentials: false,
  });
  refuseLiveRun(ctx.paths, ctx.ticket);
  const refusal = openCheckpointsRefusal(ctx.spec, openCount(readFileSync(ctx.specPath, 'utf8')));
  if (refusal) throw new UserError(refusal);
  return graduate({ ctx, deps, log: deps.log.child(`[${ctx.ticket}] `) }, { reviewSummary: '', force: true });
}
