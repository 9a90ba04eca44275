import type { SandboxSession } from '../../ports/sandbox.js';
import { type ClaimOptions, claim } from '../base/claim.js';
import { type RunContext, resolveContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import { openSandbox, startServices } from '../base/session.js';
import { type SpecCheckOutcome, specCheck } from '../loop/spec-check.js';

/**
 * `chalk check`: the spec check alone, always asked (the stamp is cleared
 * first), in a fresh sandbox; no setup command and no rubric needed.
 */
export async function checkTicket(
  deps: RunDeps,
  opts: { root: string | null; signal?: AbortSignal; atExit?: ClaimOptions['atExit'] },
): Promise<{ ctx: RunContext; outcome: SpecCheckOutcome }> {
  const ctx = await resolveContext({
    root: opts.root,
    config: deps.config,
    env: deps.env,
    needRubric: false,
    git: deps.git,
    agent: deps.agent,
  });
  const log = deps.log.child(`[${ctx.ticket}] `);
  const release = claim(ctx.paths, ctx.ticket, opts.atExit ? { atExit: opts.atExit } : {});
  const runId = `${ctx.ticket}-${Math.floor(deps.clock.now().getTime() / 1000)}`;
  let session: SandboxSession | null = null;
  try {
    await startServices(deps, log);
    session = (await openSandbox(ctx, deps, log, { runId })).session;
    const outcome = await specCheck(ctx, deps, session, log, { runId, force: true, signal: opts.signal });
    return { ctx, outcome };
  } finally {
    if (session) await session.stop().catch(() => undefined);
    release();
  }
}
