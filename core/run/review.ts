import { settingsFrom } from '../agent/driver.js';
import { modelFor } from '../agent/invocation.js';
import type { ReviewAnswer } from '../ports/agent.js';
import type { Log } from '../ports/log.js';
import type { SandboxSession } from '../ports/sandbox.js';
import type { RunContext } from './context.js';
import type { RunDeps } from './deps.js';
import { buildReviewPrompt } from './prompt.js';
import { readOnlyCall } from './read-only-call.js';

export interface ReviewOutcome {
  /** `pass` also when the review is off or gave no verdict. */
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

/**
 * The final review (`CHALK_REVIEW`): a read-only call with the review model
 * over the diff against the base branch; whatever it left in the tree is
 * discarded. No verdict counts as a pass, with a warning.
 */
export async function finalReview(
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  log: Log,
  opts: { runId: string; signal?: AbortSignal },
): Promise<ReviewOutcome> {
  if (!deps.config.bool('CHALK_REVIEW')) return { passed: true, summary: '', findings: '' };
  log.info('final review started');
  const prompt = buildReviewPrompt(ctx.prompts, {
    ticket: ctx.ticket,
    baseBranch: ctx.baseBranch,
    rubricCommand: ctx.rubricCommand,
  });
  const { answer, verdict } = await readOnlyCall('review', prompt, ctx, deps, session, {
    runId: opts.runId,
    model: modelFor('review', settingsFrom(deps.config)),
    signal: opts.signal,
  });
  const summary = answer?.summary?.trim() ?? '';
  log.info(`final review: ${answer ? verdict : 'no verdict'}.${summary ? ` ${summary}` : ''}`);
  if (!answer) {
    log.warn('final review returned no verdict; continuing without it');
    return { passed: true, summary: '', findings: '' };
  }
  if (verdict === 'pass') return { passed: true, summary, findings: '' };
  const findings = formatFindings(answer.findings) || `- [blocker] ${summary || 'the review failed without findings'}`;
  return { passed: false, summary, findings };
}
