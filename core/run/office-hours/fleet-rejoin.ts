import { rmSync } from 'node:fs';
import { writeHostFile } from '../../fs/host-file.js';
import { fleetPaths } from '../../layout.js';
import { livePid } from '../../process/pid.js';
import { ticketKeyIn } from '../../repo/git.js';
import type { RunContext } from '../base/context.js';

/** The epic whose fleet made this ticket, when that fleet's supervisor is alive now; else null. */
function liveFleetOf(ctx: Pick<RunContext, 'repo' | 'paths'>, env?: NodeJS.ProcessEnv): string | null {
  const epic = ticketKeyIn(ctx.paths.fleet);
  if (epic === null) return null;
  return livePid(fleetPaths(ctx.repo, epic, env).pid) !== null ? epic : null;
}

/**
 * After office hours, a ticket a fleet made goes back into that fleet's queue rather than
 * running beside it: a rejoin mark (the tutoring branch, a token each visit has anew) that the
 * supervisor turns into one more start when a slot and the fleet's ceiling allow
 * (core/fleet/workstreams.ts). Null when there is no live supervisor to serve the queue, and
 * also when it finished while the mark was written: then the caller runs the ticket itself.
 */
export function rejoinFleet(
  ctx: Pick<RunContext, 'repo' | 'paths' | 'branch'>,
  env?: NodeJS.ProcessEnv,
): { epic: string } | null {
  if (liveFleetOf(ctx, env) === null) return null;
  writeHostFile(ctx.paths.rejoin, `${ctx.branch}\n`);
  const epic = liveFleetOf(ctx, env);
  if (epic === null) {
    rmSync(ctx.paths.rejoin, { force: true });
    return null;
  }
  return { epic };
}
