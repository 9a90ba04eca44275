import { blockedHosts, readEgress } from '../../egress/report.js';
import { UserError } from '../../errors.js';
import { writeHostFile } from '../../fs/host-file.js';
import type { GraduateEvent } from '../../kernel/hooks.js';
import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import { checkpoints } from '../../spec/checkpoints.js';
import { markedBlock } from '../../text/model.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { committedSpec } from '../base/home.js';
import type { Run } from '../base/run.js';
import { buildPrBody, dollars, requestTitle } from './pr-body.js';

/** The exit code of a run whose push was refused or whose request could not be opened. */
export const GRADUATION_EXIT = 5;

/** How a green ticket ended (the `afterGraduate` event, as the hook gets it). */
export type Graduation = Pick<GraduateEvent, 'outcome' | 'url'>;

/** Tells the `afterGraduate` taps, then answers the graduation. */
async function graduated(run: Pick<Run, 'ctx' | 'deps'>, g: Graduation): Promise<Graduation> {
  await run.deps.hooks.afterGraduate.promise({ ticket: run.ctx.ticket, branch: run.ctx.branch, ...g });
  return g;
}

async function ticketNumbers(ctx: RunContext, deps: RunDeps, log: Log) {
  try {
    const all = await deps.store.tickets.summaries(ctx.repo);
    const s = all.find((t) => t.ticket === ctx.ticket);
    return { loops: s?.loops ?? 0, costUsd: s?.costUsd ?? 0, fixes: s?.fixes ?? 0 };
  } catch (err) {
    log.warn(`could not read the ticket's numbers: ${err instanceof Error ? err.message : String(err)}`);
    return { loops: 0, costUsd: 0, fixes: 0 };
  }
}

/**
 * `git push -u origin <branch>` from the host, through host git (no hook runs,
 * not even `pre-push`). On success git's `remote:` hints are dropped and anything else shown; a refused push shows everything
 * the remote said and stops the run (nothing is opened).
 */
export async function pushBranch(ctx: RunContext, git: HostGit, log: Log): Promise<void> {
  log.info(`pushing ${ctx.branch} to origin`);
  const r = await git.push(ctx.root, { remote: 'origin', branch: ctx.branch, setUpstream: true });
  const lines = `${r.stderr}${r.stdout}`.split('\n').filter((l) => l.trim() !== '');
  if (r.code !== 0) {
    // Through the log, like every line from outside: the remote's words reach no terminal raw.
    for (const l of lines) log.warn(l);
    throw new UserError(`could not push ${ctx.branch} to origin`, GRADUATION_EXIT);
  }
  for (const l of lines) if (!l.startsWith('remote:') && !/^branch '.*' set up to track/.test(l)) log.warn(l);
}

/**
 * Every checkpoint is ticked and the review passed: push the branch and open
 * the request through the Forge port with the summary body (through the
 * `prBody` hook). `CHALK_AUTO_MR=false` stops at `done` with a `ready` event,
 * unless `force` (a person asked: `chalk submit`, office hours with nothing open);
 * `CHALK_FORGE=none` pushes and prints the summary instead of opening anything.
 */
export async function graduate(
  run: Pick<Run, 'ctx' | 'deps' | 'log'>,
  opts: {
    reviewSummary: string;
    force?: boolean;
    /** The commit a green rubric and the passed review saw: only it graduates (the branch's HEAD must be it). */
    sealed: string;
    /** CHALK_BASELINE=known: the tests that failed on the base before this change (named in the request). */
    baselineFailures?: readonly string[] | null;
  },
): Promise<Graduation> {
  const { ctx, deps, log } = run;
  const head = await deps.git.revParse(ctx.root, 'HEAD');
  if (head !== opts.sealed) {
    throw new UserError(
      `${ctx.branch} is at ${head.slice(0, 12)}, which no green rubric and review saw (they saw ${opts.sealed.slice(0, 12)}); run chalk run: it runs them, then opens the request`,
      GRADUATION_EXIT,
    );
  }
  writeHostFile(ctx.paths.sealed, `${head}\n`);
  const n = await ticketNumbers(ctx, deps, log);
  log.info(
    `all checkpoints complete (${n.loops} loop${n.loops === 1 ? '' : 's'}, ${dollars(n.costUsd)}, ${n.fixes} human intervention${n.fixes === 1 ? '' : 's'})`,
  );
  if (!opts.force && !deps.config.bool('CHALK_AUTO_MR')) {
    await deps.store.events.record(ctx.repo, ctx.ticket, 'ready');
    log.info(`CHALK_AUTO_MR is off: the work is done on ${ctx.branch}; push it and open the request yourself`);
    return graduated(run, { outcome: 'ready', url: null });
  }
  const spec = await committedSpec(deps.git, ctx);
  const body = await buildPrBody(deps.hooks, {
    ticket: ctx.ticket,
    loops: n.loops,
    costUsd: n.costUsd,
    specPath: ctx.spec,
    checkpoints: checkpoints(spec).length,
    humanInterventions: n.fixes,
    rubricCommand: ctx.rubricCommand,
    reviewSummary: opts.reviewSummary,
    blocked: blockedHosts(readEgress(ctx.paths.egress)),
    ...(opts.baselineFailures ? { baselineFailures: opts.baselineFailures } : {}),
  });
  const forge = deps.forge();
  await pushBranch(ctx, deps.git, log);
  if (!forge.opensRequests) {
    log.info(`pushed ${ctx.branch}; CHALK_FORGE=${forge.name}, so no request was opened. Summary:`);
    for (const l of markedBlock(body)) log.info(l);
    await deps.store.events.record(ctx.repo, ctx.ticket, 'ready');
    return graduated(run, { outcome: 'pushed', url: null });
  }
  let url: string | null;
  try {
    ({ url } = await forge.openRequest({
      repoRoot: ctx.root,
      branch: ctx.branch,
      base: ctx.baseBranch,
      title: requestTitle(spec, ctx.ticket),
      body,
    }));
  } catch (err) {
    // The push has moved origin's branch: say so, rather than leave the person to guess.
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new UserError(
      `${why}; ${ctx.branch} is pushed to origin but no request was opened: open it yourself, or run chalk submit again`,
      GRADUATION_EXIT,
    );
  }
  log.info(url ? `request opened: ${url}` : `request opened on ${forge.name}`);
  await deps.store.events.record(ctx.repo, ctx.ticket, 'submitted').catch(() => undefined);
  return graduated(run, { outcome: 'opened', url });
}
