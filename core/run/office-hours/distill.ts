import type { HostGit } from '../../ports/host-git.js';
import type { Log } from '../../ports/log.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { buildDistillPrompt } from '../base/prompt.js';
import { readOnlyCall } from '../base/read-only-call.js';
import { openSandbox } from '../base/session.js';
import { setupSandbox } from '../loop/setup-state.js';
import {
  DETENTION_SEARCH_DEPTH,
  type Distilled,
  describeFix,
  distillStatus,
  FIX_DIFF_LINES,
  type FixFacts,
  findDetentionCommit,
  interpretDistill,
} from './office-hours-rules.js';

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];

/**
 * What changed on the checked-out branch since its newest detention commit,
 * read by host git on the host (never by a sandbox): not found, nothing, or
 * the number of commits, the diffstat and the diff's first lines.
 */
export async function fixFacts(git: HostGit, root: string): Promise<FixFacts> {
  const head = await git.revParse(root, 'HEAD');
  const found = findDetentionCommit(await git.recentCommits(root, { rev: head, max: DETENTION_SEARCH_DEPTH }));
  if (!found) return { kind: 'not-found' };
  if (found.since === 0) return { kind: 'unchanged' };
  const d = await git.diffSummary(root, { from: found.sha, to: head, maxLines: FIX_DIFF_LINES });
  return { kind: 'changed', commits: found.since, ...d };
}

export interface DistillOptions {
  runId: string;
  /** The open lesson's failure (its signature). */
  signature: string;
  note: string;
  signal?: AbortSignal;
}

/**
 * Office hours' distillation (`CHALK_DISTILL`): the cheap model, read-only, in
 * a sandbox of its own on the detention branch, gets the failure, the note and
 * what changed since the detention, and answers a lesson and its scope. The
 * call is recorded (`distill`, status `ok` with a lesson, else `none`). Best
 * effort: off, or anything failing, leaves the note as the fix (repository only).
 */
export async function distill(ctx: RunContext, deps: RunDeps, log: Log, o: DistillOptions): Promise<Distilled> {
  if (!deps.config.bool('CHALK_DISTILL')) {
    return { source: 'off', lesson: null, scope: 'repo', why: 'CHALK_DISTILL is off' };
  }
  try {
    const fix = describeFix(await fixFacts(deps.git, ctx.root));
    await deps.sandbox.ensureImage();
    const opened = await openSandbox(ctx, deps, log, { runId: o.runId, suffix: 'distill' });
    const { session } = opened;
    try {
      await setupSandbox(ctx, deps, log, opened, { runSetup: false, signal: o.signal });
      const model = deps.agent.modelFor('distill');
      log.info(`distilling your note into a lesson with ${model || 'the default model'}`);
      const prompt = buildDistillPrompt(ctx.prompts, { signature: o.signature, note: o.note, fix });
      const { answer } = await readOnlyCall('distill', prompt, ctx, deps, session, {
        runId: o.runId,
        model,
        signal: o.signal,
        statusOf: (a) => distillStatus(interpretDistill(a)),
      });
      return interpretDistill(answer);
    } finally {
      await session.stop().catch(() => undefined);
    }
  } catch (err) {
    if (o.signal?.aborted) throw err;
    log.warn(`distillation failed: ${describe(err)}`);
    return { source: 'failed', lesson: null, scope: 'repo', why: 'distillation failed' };
  }
}
