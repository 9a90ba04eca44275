import { readFileSync } from 'node:fs';
import { UserError } from '../../errors.js';
import { openCount } from '../../spec/checkpoints.js';
import { refuseLiveRun } from '../base/claim.js';
import { resolveContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { committedSpec } from '../base/home.js';
import { type Graduation, graduate } from './graduation.js';

/** Why `chalk submit` refuses a spec with open checkpoints, or null when none is open. */
export function openCheckpointsRefusal(spec: string, open: number): string | null {
  if (open === 0) return null;
  return `${spec} has ${open} open checkpoint${open === 1 ? '' : 's'}; finish ${open === 1 ? 'it' : 'them'} (chalk run) or tick ${open === 1 ? 'it' : 'them'}, commit, then chalk submit`;
}

/** The commit the ticket's last graduation saw green and reviewed (`runs/<T>/sealed`), or null. */
function readSeal(path: string): string | null {
  try {
    const sha = readFileSync(path, 'utf8').trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

/** Why `chalk submit` refuses a HEAD no green rubric and review saw, or null when they saw it. */
export function sealRefusal(branch: string, head: string, sealed: string | null): string | null {
  if (sealed === head) return null;
  return `no green rubric and review saw ${branch} as it is (${head.slice(0, 12)}); run chalk run: with every checkpoint ticked it runs them, then opens the request (or, with CHALK_AUTO_MR=false, stops for chalk submit)`;
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
  });
  refuseLiveRun(ctx.paths, ctx.ticket);
  const refusal = openCheckpointsRefusal(ctx.spec, openCount(await committedSpec(deps.git, ctx)));
  if (refusal) throw new UserError(refusal);
  const head = await deps.git.revParse(ctx.root, 'HEAD');
  const refusedSeal = sealRefusal(ctx.branch, head, readSeal(ctx.paths.sealed));
  if (refusedSeal) throw new UserError(refusedSeal);
  return graduate(
    { ctx, deps, log: deps.log.child(`[${ctx.ticket}] `) },
    { reviewSummary: '', force: true, sealed: head },
  );
}
