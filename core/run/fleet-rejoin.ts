import { readFileSync, rmSync } from 'node:fs';
import { writeHostFile } from '../fs/host-file.js';
import { fleetPaths } from '../layout.js';
import { livePid } from '../process/pid.js';
import type { RunContext } from './context.js';

/** An epic key, as the fleet's plan validation allows (the mark is a file a person could edit). */
const EPIC = /^[A-Z][A-Z0-9]+-[0-9]+$/;

/** The epic whose fleet made this ticket, when that fleet's supervisor is alive now; else null. */
function liveFleetOf(ctx: Pick<RunContext, 'repo' | 'paths'>, env?: NodeJS.ProcessEnv): string | null {
  let epic: string;
  try {
    epic = readFileSync(ctx.paths.fleet, 'utf8').slice(0, 200).trim();
  } catch {
    return null;
  }
  if (!EPIC.test(epic)) return null;
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
