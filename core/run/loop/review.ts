import type { ReviewAnswer } from '../../ports/agent.js';
import type { Log } from '../../ports/log.js';
import type { SandboxSession } from '../../ports/sandbox.js';
import { quoted } from '../../text/model.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { buildReviewPrompt } from '../base/prompt.js';
import { readOnlyCall } from '../base/read-only-call.js';

export interface ReviewOutcome {
  /** True for a `pass` verdict, or when the review is off; a review with no readable verdict failed. */
  passed: boolean;
  /** The review's summary ('' when none), for the request body. */
  summary: string;
  /** The findings as `- [severity] file: issue` lines; '' when it passed. */
  findings: string;
}

/** Findings as the fix-review loop and the detention show them. */
export function formatFindings(findings: ReviewAnswer['findings']): string {
  return findings.map((f) => `- [${f.severity}] ${f.file ? `${f.file}: ` : ''}${f.issue}`).join('\n');
}

/** The finding a review with no readable verdict gets, with the call's status when it did not end `ok`. */
export const noVerdict = (status: string) =>
  `the review gave no readable verdict${status === 'ok' ? '' : ` (the call ended ${status})`}`;

/**
 * What a review's answer means. Only a readable `pass` passes: a review with
 * no answer (the call failed, stopped early or answered something the schema
 * refused) fails with one blocker finding saying so, and goes through the same
 * fix-review rounds as a failing one. A `fail` without findings gets its
 * summary as the blocker.
 */
export function reviewOutcome(r: {
  answer: ReviewAnswer | null;
  verdict: 'pass' | 'fail' | 'none';
  /** The call's status (`ok`, or the CLI's error status), named when there is no verdict. */
  status: string;
}): ReviewOutcome {
  const summary = r.answer?.summary?.trim() ?? '';
  if (!r.answer || (r.verdict !== 'pass' && r.verdict !== 'fail')) {
    return { passed: false, summary: '', findings: `- [blocker] ${noVerdict(r.status)}` };
  }
  if (r.verdict === 'pass') return { passed: true, summary, findings: '' };
  const findings =
    formatFindings(r.answer.findings) || `- [blocker] ${summary || 'the review failed without findings'}`;
  return { passed: false, summary, findings };
}

/**
 * The final review (`CHALK_REVIEW`): a read-only call with the review model
 * over the diff against the base branch; whatever it left in the tree is
 * discarded. No readable verdict is a failed review (reviewOutcome).
 */
export async function finalReview(
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  log: Log,
  opts: { runId: string; signal?: AbortSignal; baselineFailures?: readonly string[] | null },
): Promise<ReviewOutcome> {
  if (!deps.config.bool('CHALK_REVIEW')) return { passed: true, summary: '', findings: '' };
  log.info('final review started');
  const prompt = buildReviewPrompt(ctx.prompts, {
    ticket: ctx.ticket,
    baseBranch: ctx.baseBranch,
    rubricCommand: ctx.rubricCommand,
    ...(opts.baselineFailures ? { baselineFailures: opts.baselineFailures } : {}),
  });
  const { answer, verdict, result } = await readOnlyCall('review', prompt, ctx, deps, session, {
    runId: opts.runId,
    model: deps.agent.modelFor('review'),
    signal: opts.signal,
  });
  const outcome = reviewOutcome({ answer, verdict, status: result.status });
  if (!answer) {
    log.warn(`final review: ${noVerdict(result.status)}; counted as a failed review`);
    return outcome;
  }
  log.info(`final review: ${verdict}.${outcome.summary ? ` summary: ${quoted(outcome.summary)}` : ''}`);
  return outcome;
}
