import { existsSync, readFileSync } from 'node:fs';
import type { Fingerprint } from '../fingerprint/fingerprint.js';
import { writeHostFile } from '../fs/host-file.js';
import type { DetentionFacts } from '../layout.js';
import type { HostGit } from '../ports/host-git.js';
import {
  type DetentionKind,
  detentionBranch,
  detentionCommitMessage,
  detentionLines,
  detentionSignature,
  nextStep,
} from './detention-reasons.js';
import { bringHome } from './home.js';
import type { DetainRequest } from './policy.js';
import type { Run } from './run.js';

/** The exit code of a detained run. */
export const DETENTION_EXIT = 3;

export interface DetainInput extends DetainRequest {
  /** The last loop's fingerprint (kept with the lesson only for rubric failures). */
  fingerprint?: Fingerprint | null;
  /** Refused actions in the last loop. */
  denials?: number;
  /** deja_vu: the other ticket. */
  openTicket?: string | null;
  /** stuck: the decider's confidence. */
  confidence?: number;
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
  run: Pick<Run, 'ctx' | 'deps' | 'session' | 'base' | 'log' | 'id'>,
  d: DetainInput,
): Promise<{ branch: string; lessonId: number | null }> {
  const { ctx, deps, session, base, log } = run;
  const epoch = Math.floor(deps.clock.now().getTime() / 1000);
  const branch = detentionBranch(ctx.ticket, epoch, await existingDetentionBranches(deps.git, ctx.root));
  const green = await deps.git.revParse(ctx.root, 'HEAD');
  let parked = false;
  try {
    await session.commitAll(detentionCommitMessage(ctx.ticket, d.reason), { allowEmpty: true });
    const home = await bringHome(ctx, deps.git, session, { base, target: { kind: 'branch', name: branch } });
    if (home.kind === 'home') parked = true;
    else if (home.kind === 'refused') log.warn(`could not bring the failed attempt home: ${home.reason}`);
  } catch (err) {
    log.warn(`could not bring the failed attempt home: ${err instanceof Error ? err.message : String(err)}`);
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
    confidence: d.confidence,
    denials: d.denials ?? 0,
    files: d.files,
    branch,
  });
  const facts: DetentionFacts = {
    reason: d.reason,
    ...(d.detail.trim() !== '' ? { detail: d.detail } : {}),
    branch,
    green,
    lesson: signature,
    ...(lessonId !== null ? { lesson_id: lessonId } : {}),
  };
  writeHostFile(ctx.paths.detention, `${JSON.stringify(facts, null, 2)}\n`);
  for (const line of detentionLines({ reason: d.reason, detail: d.detail, next, branch, worktree: ctx.root })) {
    log.info(line);
  }
  await deps.hooks.onDetain.promise({ ticket: ctx.ticket, reason: d.reason, branch, lessonId, next });
  return { branch, lessonId };
}
