import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../ports/log.js';
import type { SandboxSession } from '../../ports/sandbox.js';
import { clearStamp, STAMP_FILE, stampMatches, writeStamp } from '../../spec/stamp.js';
import { quoted } from '../../text/model.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { buildSpecCheckPrompt } from '../base/prompt.js';
import { readOnlyCall } from '../base/read-only-call.js';
import { secs, usd } from '../base/record.js';

export type SpecCheckOutcome = 'pass' | 'fail' | 'skipped' | 'none';

export const stampPath = (ctx: RunContext) => join(ctx.paths.dir, STAMP_FILE);

/**
 * The spec check: the cheap model reads the spec, read-only, and says whether
 * its checkpoints are ready for an agent. Skipped when the stamp says it passed
 * for these checkpoints (`force` clears the stamp first, for `chalk check`).
 * A failure records `spec_blocked` and prints every problem and suggestion.
 */
export async function specCheck(
  ctx: RunContext,
  deps: RunDeps,
  session: SandboxSession,
  log: Log,
  opts: { runId: string; force?: boolean; signal?: AbortSignal },
): Promise<SpecCheckOutcome> {
  const stamp = stampPath(ctx);
  if (opts.force) clearStamp(stamp);
  const spec = readFileSync(ctx.specPath, 'utf8');
  if (stampMatches(stamp, spec)) {
    log.info('spec check skipped: it passed before and the checkpoints have not changed');
    return 'skipped';
  }
  const model = deps.agent.modelFor('spec-check');
  log.info(`checking the spec with ${model || 'the default model'}`);
  const prompt = buildSpecCheckPrompt(ctx.prompts, ctx.ticket);
  const { result, answer, verdict } = await readOnlyCall('spec-check', prompt, ctx, deps, session, {
    runId: opts.runId,
    model,
    signal: opts.signal,
  });
  if (verdict === 'pass') {
    writeStamp(stamp, spec);
    log.info(`spec check passed (${usd(result.costUsd)}, ${secs(result.durationMs)})`);
    return 'pass';
  }
  if (verdict === 'fail' && answer) {
    await deps.store.events.record(ctx.repo, ctx.ticket, 'spec_blocked');
    log.info('spec check found checkpoints that are not ready:');
    for (const p of answer.problems) {
      // The checker's words, one quoted line each: a problem cannot print a line of Chalk's own.
      log.info(`  - checkpoint ${quoted(p.checkpoint)}`);
      log.info(`    problem: ${quoted(p.problem)}`);
      if (p.suggestion) log.info(`    suggestion: ${quoted(p.suggestion)}`);
    }
    return 'fail';
  }
  log.warn(`spec check returned no verdict (agent ${result.status}); continuing without it`);
  return 'none';
}
