import { existsSync, readFileSync } from 'node:fs';
import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import { writeHostFile } from '../../fs/host-file.js';
import type { DetentionFacts } from '../../layout.js';
import type { HostGit } from '../../ports/host-git.js';
import {
  type DetentionKind,
  detentionBranch,
  detentionCommitMessage,
  detentionLines,
  detentionSignature,
  failureLines,
  nextStep,
} from '../base/detention-reasons.js';
import { bringHome, homeLimits } from '../base/home.js';
import type { DetainRequest } from '../base/policy.js';
import type { Run } from '../base/run.js';

/** The exit code of a detained run. */
export const DETENTION_EXIT = 3;

export interface DetainInput extends DetainRequest {
  /** The last loop's fingerprint (kept with the lesson only for rubric failures). */
  fingerprint?: Fingerprint | null;
  /** Refused actions in the last loop. */
  denials?: number;
  /** deja_vu: the other ticket. */
  openTicket?: string | null;
  /** The `next:` line's text a plugin's StopRequest gave; default the kind's own. */
  next?: string;
  /** What the egress proxy refused during the last loop's rubric. */
  egressBlocked?: readonly string[];
  /** environment: the command the sandbox lacks. */
  command?: string | null;
}

const RUBRIC_KINDS: ReadonlySet<DetentionKind> = new Set(['failed', 'repeat', 'no_change', 'deja_vu', 'stuck']);

const readOr = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');

async function existingDetentionBranches(git: HostGit, root: string): Promise<string[]> {
  return git.forEachRef(root, ['refs/heads/detention/']).catch(() => []);
}

/**
 * Parks the failed attempt and records why: the sandbox's work is committed
 * (allow-empty) and fetched onto `detention/T-<epoch>` on the host, leaving
 * the ticket branch with only green work; nothing is pushed. Then an open
 * lesson, a `detention` event, `io/detention.json`, the printed lines with
 * exactly one `next:`, and the `onDetain` hook.
 */
export async function detain(
  run: Pick<Run, 'ctx' | 'deps' | 'session' | 'base' | 'log' | 'id' | 'work'>,
  d: DetainInput,
): Promise<{ branch: string; lessonId: number | null }> {
  const { ctx, deps, session, base, log } = run;
  const epoch = Math.floor(deps.clock.now().getTime() / 1000);
  const branch = detentionBranch(ctx.ticket, epoch, await existingDetentionBranches(deps.git, ctx.root));
  const green = await deps.git.revParse(ctx.root, 'HEAD');
  let parked: string | null = null;
  try {
    // What is left running (a fork bomb holding every pid among it) would keep the attempt from coming home.
    await session.reapStrays();
    // The same caps as a fast-forward: nobody checks a detention branch out but the person.
    const home = await bringHome(ctx, deps.git, session, {
      commit: run.work.commitRequest(detentionCommitMessage(ctx.ticket, d.reason), base, { allowEmpty: true }),
      base,
      target: { kind: 'branch', name: branch },
      limits: homeLimits(deps.config),
      forgeGuarded: deps.guardedPaths,
    });
    if (home.kind === 'home') parked = home.head;
    else if (home.kind === 'refused') log.warn(`the failed attempt was not kept: ${home.reason}`);
  } catch (err) {
    log.warn(`the failed attempt was not kept: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!parked) await deps.git.createBranch(ctx.root, { name: branch, at: green });

  const signature = detentionSignature(d.reason, d.detail, readOr(ctx.paths.rubricLog));
  const fp = RUBRIC_KINDS.has(d.kind) && d.fingerprint?.rubric === 'failed' ? d.fingerprint : null;
  let lessonId: number | null = null;
  try {
    lessonId = await deps.store.lessons.open({
      repo: ctx.repo,
      ticket: ctx.ticket,
      signature,
      runId: run.id,
      fingerprint: fp?.hash ?? null,
      firstError: fp && fp.firstError !== '' ? fp.firstError : null,
    });
    await deps.store.events.record(ctx.repo, ctx.ticket, 'detention');
  } catch (err) {
    log.warn(`could not record the detention: ${err instanceof Error ? err.message : String(err)}`);
  }

  const next = nextStep({
    kind: d.kind,
    io: ctx.paths.io,
    maxRetries: deps.config.num('CHALK_MAX_RETRIES'),
    maxLoops: deps.config.num('CHALK_MAX_LOOPS'),
    reviewRounds: deps.config.num('CHALK_REVIEW_ROUNDS'),
    budgetUsd: deps.config.str('CHALK_BUDGET_USD'),
    openTicket: d.openTicket ?? null,
    ...(d.next !== undefined ? { given: d.next } : {}),
    denials: d.denials ?? 0,
    files: d.files,
    branch,
    command: d.command ?? null,
    ...(d.ending ? { ending: d.ending } : {}),
    ...(d.egressBlocked ? { egressBlocked: d.egressBlocked } : {}),
  });
  const facts: DetentionFacts = {
    reason: d.reason,
    ...(d.detail.trim() !== '' ? { detail: d.detail } : {}),
    branch,
    green,
    parked: parked ?? green,
    lesson: signature,
    ...(lessonId !== null ? { lesson_id: lessonId } : {}),
    ...(d.fingerprint?.rubric === 'failed' && d.fingerprint.firstError !== ''
      ? { first_error: d.fingerprint.firstError }
      : {}),
  };
  writeHostFile(ctx.paths.detention, `${JSON.stringify(facts, null, 2)}\n`);
  const failure = fp ? failureLines(fp) : [];
  for (const line of detentionLines({
    reason: d.reason,
    failure,
    detail: d.detail,
    next,
    branch,
    worktree: ctx.root,
    parked: parked !== null,
  })) {
    log.info(line);
  }
  await deps.hooks.onDetain.promise({ ticket: ctx.ticket, kind: d.kind, reason: d.reason, branch, lessonId, next });
  return { branch, lessonId };
}
