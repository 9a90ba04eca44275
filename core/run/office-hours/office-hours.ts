import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { z } from 'zod';
import { loadConfig, parseConfigFile } from '../../config/config.js';
import { resolveWithEmbedding } from '../../embedding/lessons.js';
import { UserError } from '../../errors.js';
import type { DetentionFacts } from '../../layout.js';
import type { Log } from '../../ports/log.js';
import { openCount } from '../../spec/checkpoints.js';
import { refuseLiveRun } from '../base/claim.js';
import { type RunContext, resolveContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { epochBranch } from '../base/detention-reasons.js';
import { committedSpec } from '../base/home.js';
import { CallTracker, recordOnAbort, trackingAgent } from '../base/interrupt.js';
import { type RunResult, type RunTicketOptions, runTicket } from '../loop/run-ticket.js';
import { detachRun } from '../resume/detach.js';
import { type DistillOptions, distill } from './distill.js';
import { rejoinFleet } from './fleet-rejoin.js';
import { restoreGrading } from './office-hours-guard.js';
import { type Distilled, lessonLine, noteRefusal, officeHoursBranchRefusal } from './office-hours-rules.js';

/** What `io/detention.json` may hold (core/layout.ts DetentionFacts); anything else is ignored. */
const detentionFacts = z
  .object({
    reason: z.string().optional(),
    branch: z.string().optional(),
    green: z.string().optional(),
    parked: z.string().optional(),
    lesson: z.string().optional(),
    lesson_id: z.number().int().positive().optional(),
  })
  .passthrough();

function readDetentionFacts(path: string): DetentionFacts | null {
  try {
    const parsed = detentionFacts.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface OfficeHoursOptions extends Pick<RunTicketOptions, 'signal' | 'onInterrupt' | 'atExit'> {
  /** The worktree root (null outside a repository: a refusal). */
  root: string | null;
  /** `-m NOTE`: what was wrong and how the person fixed it. */
  note: string | undefined;
  /** Resume the run in the background (`chalk run --detach`). */
  detach?: boolean;
  /** Starts the background run (default core/run/resume/detach.ts). */
  detachRun?: (ctx: RunContext) => number;
  /**
   * The ports for what follows the grading files' return, read afresh from the tutoring branch
   * (the CLI boots a new kernel); by default the same ports with the configuration read again.
   */
  reboot?: () => Promise<RunDeps>;
}

export type OfficeHoursNext =
  | { kind: 'run'; result: RunResult }
  | { kind: 'detached'; pid: number }
  /** A fleet made the ticket and its supervisor runs it again when a slot frees. */
  | { kind: 'rejoined'; epic: string };

export interface OfficeHoursResult {
  /** The context on the new `tutoring/...` branch. */
  ctx: RunContext;
  lessonId: number;
  distilled: Distilled;
  next: OfficeHoursNext;
  exitCode: number;
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

/** The distillation with its call tracked, so a signal records it `interrupted` as a run's calls are. */
async function distillTracked(
  ctx: RunContext,
  deps: RunDeps,
  log: Log,
  d: DistillOptions & Pick<OfficeHoursOptions, 'onInterrupt'>,
): Promise<Distilled> {
  const tracker = new CallTracker();
  const tracked: RunDeps = { ...deps, agent: trackingAgent(deps.agent, tracker, () => deps.clock.now().getTime()) };
  const { onInterrupt, ...opts } = d;
  const unhook = recordOnAbort({ ctx, deps: tracked, tracker, runId: d.runId, signal: d.signal, onInterrupt });
  try {
    return await distill(ctx, tracked, log, opts);
  } finally {
    unhook();
  }
}

/** The refusals, before anything starts: the note, the branch, the run's own checks, a live run, another detention. */
async function preflight(deps: RunDeps, o: OfficeHoursOptions) {
  const noteProblem = noteRefusal(o.note);
  if (noteProblem) throw new UserError(noteProblem);
  if (!o.root) throw new UserError('chalk office-hours works inside a git worktree: cd into the ticket worktree');
  const branchProblem = officeHoursBranchRefusal(await deps.git.currentBranchName(o.root));
  if (branchProblem) throw new UserError(branchProblem);
  const detained = await resolveContext({
    root: o.root,
    config: deps.config,
    env: deps.env,
    git: deps.git,
    agent: deps.agent,
  });
  refuseLiveRun(detained.paths, detained.ticket);
  const facts = readDetentionFacts(detained.paths.detention);
  if (facts?.branch && facts.branch !== detained.branch) {
    throw new UserError(
      `the open detention of ${detained.ticket} is ${facts.branch}, not ${detained.branch}: git switch to it, commit your fix there, then run chalk office-hours again`,
    );
  }
  return { detained, facts, note: (o.note ?? '').trim() };
}

/**
 * Resolves the open lesson (opening one from the signature when the detention left no id), with
 * its embedding when an Embedder is bound and answers within RESOLVE_EMBED_MS (else without: the
 * local service's back-fill writes it when it comes up); returns its id.
 */
async function resolveLesson(
  ctx: RunContext,
  deps: RunDeps,
  r: { lessonId: number | undefined; signature: string; note: string; distilled: Distilled },
): Promise<number> {
  const resolvedBy = (await deps.git.configGet(ctx.root, 'user.email'))?.trim() || osUser();
  try {
    const id =
      r.lessonId ??
      (await deps.store.lessons.open({ repo: ctx.repo, ticket: ctx.ticket, signature: r.signature, runId: null }));
    let embedder: ReturnType<NonNullable<RunDeps['embedder']>> = null;
    try {
      embedder = deps.embedder?.() ?? null;
    } catch {
      embedder = null;
    }
    const done = await resolveWithEmbedding({
      store: deps.store,
      embedder,
      resolve: { id, resolution: r.note, lesson: r.distilled.lesson, resolvedBy, scope: r.distilled.scope },
    });
    if (!done.embedded && embedder) {
      deps.log.debug(`lesson ${id} was resolved without its embedding (${done.reason}); a back-fill writes it later`);
    }
    return id;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UserError(`could not record the lesson (${why.split('\n')[0]}); no branch was changed, run it again`);
  }
}

/**
 * On the tutoring branch: the request when nothing is open (whatever CHALK_AUTO_MR says); a fleet's
 * ticket whose supervisor is alive back into its queue; else the run, here or detached.
 */
async function continueTicket(
  ctx: RunContext,
  deps: RunDeps,
  log: Log,
  o: OfficeHoursOptions,
): Promise<{ next: OfficeHoursNext; exitCode: number }> {
  if (openCount(await committedSpec(deps.git, ctx)) === 0) {
    // Nothing open: still nothing graduates without the rubric and the review (runTicket runs
    // them before the request, which is opened whatever CHALK_AUTO_MR says: a person asked).
    const result = await runTicket(deps, { ...runOptions(ctx, o), forceRequest: true });
    return { next: { kind: 'run', result }, exitCode: result.exitCode };
  }
  const fleet = rejoinFleet(ctx, deps.env);
  if (fleet) {
    log.info(
      `back in fleet ${fleet.epic}'s queue: its supervisor runs ${ctx.ticket} again when a slot frees (see: chalk fleet ${fleet.epic} --status)`,
    );
    return { next: { kind: 'rejoined', epic: fleet.epic }, exitCode: 0 };
  }
  if (o.detach) {
    const pid = (o.detachRun ?? detachRun)(ctx);
    log.info(`running in the background (pid ${pid}); follow with: chalk logs ${ctx.ticket} -f`);
    return { next: { kind: 'detached', pid }, exitCode: 0 };
  }
  const result = await runTicket(deps, runOptions(ctx, o));
  return { next: { kind: 'run', result }, exitCode: result.exitCode };
}

const runOptions = (ctx: RunContext, o: OfficeHoursOptions): RunTicketOptions => ({
  root: ctx.root,
  ctx,
  signal: o.signal,
  onInterrupt: o.onInterrupt,
  atExit: o.atExit,
});

/** The run's textbook as the green commit's configuration names it (the environment first), for the guard. */
async function textbookAt(deps: RunDeps, root: string, rev: string | undefined): Promise<string> {
  const env = deps.env?.CHALK_TEXTBOOK;
  if (env) return env;
  const file = rev ? await deps.git.fileAt(root, { rev, path: '.chalk/config' }).catch(() => null) : null;
  return (file && parseConfigFile(file.text).values.get('CHALK_TEXTBOOK')) || deps.config.str('CHALK_TEXTBOOK');
}

/** The same ports with the configuration read again from the worktree as it is now. */
const reread = async (deps: RunDeps, root: string): Promise<RunDeps> => ({
  ...deps,
  config: loadConfig({ root, env: deps.env, warn: (l) => deps.log.warn(l) }).withKeys(deps.config.table),
});

/**
 * `chalk office-hours -m NOTE`: on a `detention/*` branch, after the person
 * committed their fix (or nothing, when the fix was outside the repository).
 * The note is distilled into a lesson (best effort), the open lesson resolved
 * (note, lesson, scope, who; the store stamps when), then work goes on from
 * the detention branch's HEAD on a new `tutoring/TICKET-<epoch>` branch: the
 * loop resumes while checkpoints are open, else the request is opened
 * whatever `CHALK_AUTO_MR` says. The detention branch stays as it was.
 */
export async function officeHours(deps: RunDeps, o: OfficeHoursOptions): Promise<OfficeHoursResult> {
  const { detained, facts, note } = await preflight(deps, o);
  const log = deps.log.child(`[${detained.ticket}] `);
  const epoch = Math.floor(deps.clock.now().getTime() / 1000);
  const runId = `${detained.ticket}-${epoch}`;
  const signature = facts?.lesson ?? facts?.reason ?? `detained on ${detained.branch}`;
  const distilled = await distillTracked(detained, deps, log, {
    runId,
    signature,
    note,
    signal: o.signal,
    onInterrupt: o.onInterrupt,
  });
  const lessonId = await resolveLesson(detained, deps, { lessonId: facts?.lesson_id, signature, note, distilled });
  log.info(lessonLine(distilled));

  const existing = await deps.git.forEachRef(detained.root, ['refs/heads/tutoring/']).catch(() => []);
  const tutoring = epochBranch('tutoring', { ticket: detained.ticket, epochSeconds: epoch, existing });
  await deps.git.switchNewBranch(detained.root, tutoring);
  log.info(`lesson recorded; continuing on ${tutoring}`);
  const textbook = await textbookAt(deps, detained.root, facts?.green);
  await restoreGrading(detained, deps.git, log, { facts, textbook, forgeGuarded: deps.guardedPaths });
  // What follows reads the configuration, textbook and prompts as they are now, on the tutoring branch.
  const next = await (o.reboot ? o.reboot() : reread(deps, detained.root));
  const ctx = await resolveContext({
    root: detained.root,
    config: next.config,
    env: next.env,
    git: next.git,
    agent: next.agent,
  });
  return { ctx, lessonId, distilled, ...(await continueTicket(ctx, next, log, o)) };
}
