import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import type { Judgement } from '../../fingerprint/streak.js';
import type { RubricEvent, StopRequest } from '../../kernel/hooks.js';
import type { HostBudget } from '../../ports/decider.js';
import type { LoopEnding } from '../base/policy.js';
import type { LoopPlan, Run } from '../base/run.js';
import { treeDiffstat } from './tree-diffstat.js';

export const hookFingerprint = (fp: Fingerprint | null): RubricEvent['fingerprint'] =>
  fp
    ? {
        failingTests: fp.tests ?? [],
        firstError: fp.firstError === '' ? null : fp.firstError,
        treeId: fp.treeId === '' ? null : fp.treeId,
        hash: fp.hash,
        testsKnown: fp.tests !== null,
      }
    : undefined;

export interface LoopJudgement {
  judgement: Judgement;
  /** deja_vu: the ticket whose open detention fails the same way. */
  openTicket: string | null;
}

/**
 * The loop's verdict against the run's streak: a failed loop with known tests
 * is first looked up among other tickets' open detentions (deja_vu). A loop
 * the guard refused, or whose commits were refused on their way home, is judged
 * without its fingerprint: it cannot count as a repeat.
 */
export async function judgeStep(run: Run, ending: LoopEnding, fingerprint: Fingerprint | null): Promise<LoopJudgement> {
  const { ctx, deps } = run;
  let openTicket: string | null = null;
  if (ending.ended === 'failed' && run.rules !== 'off' && fingerprint?.tests && fingerprint.hash) {
    try {
      const open = await deps.store.lessons.openByFingerprint(ctx.repo, fingerprint.hash, ctx.ticket);
      openTicket = open[0]?.ticket ?? null;
    } catch (err) {
      run.log.warn(`could not look for a matching open detention: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const judgement = run.streak.judge(
    ending.ended,
    ending.guarded || ending.refused ? null : fingerprint,
    openTicket !== null,
  );
  return { judgement, openTicket };
}

/** `onVerdict` with the loop's verdict (when there is one): a deciding tap may ask to stop the run. */
export async function verdictStep(
  run: Run,
  plan: LoopPlan,
  v: { judged: LoopJudgement; ending: LoopEnding; fingerprint: Fingerprint | null; callId: number; budget: HostBudget },
): Promise<StopRequest | undefined> {
  const { judgement } = v.judged;
  // No verdict (a progressed loop, or CHALK_FP_RULES=off): the hook does not fire (its contract in hooks.ts).
  const ended = v.ending.ended;
  if (judgement.verdict === null || run.rules === 'off' || ended === 'progressed') return undefined;
  const diffstat = treeDiffstat(run.session, { previous: judgement.previous?.treeId, current: v.fingerprint?.treeId });
  return run.deps.hooks.onVerdict.promise({
    ticket: run.ctx.ticket,
    loop: plan.loop,
    verdict: judgement.verdict,
    rulesMode: run.rules,
    previous: hookFingerprint(judgement.previous),
    current: hookFingerprint(v.fingerprint),
    ended,
    reason: v.ending.reason,
    repo: run.ctx.repo,
    runId: run.id,
    callId: v.callId,
    mode: plan.mode,
    budget: v.budget,
    diffstat,
    decisionsFile: run.ctx.paths.decisions,
  });
}
