import { allowLine, blockedHosts, EGRESS_FILE_CAP, egressLine, readText } from '../../egress/report.js';
import { writeHostFile } from '../../fs/host-file.js';
import type { Log } from '../../ports/log.js';
import type { SandboxSession } from '../../ports/sandbox.js';

/**
 * What a sandbox was refused on its way out, as the run tells it: each phase's refusals (setup,
 * a loop's agent call, its rubric, a review) read back from the sandbox's egress after the
 * phase, appended to `io/egress.jsonl` (core/egress/report.ts) and said in one log line naming
 * them and the setting that would allow them.
 */

/** Destinations a log line names before it says how many more there were. */
const NAMED = 5;

function named(targets: readonly string[]): string {
  const shown = targets.slice(0, NAMED).join(', ');
  return targets.length > NAMED ? `${shown} and ${targets.length - NAMED} more` : shown;
}

/**
 * Reads what the sandbox was refused since the last phase, keeps it in io/egress.jsonl under
 * `phase`, and says it in one log line; returns the refused destinations the person could allow
 * ([] when none, or when the sandbox has no egress of its provider's).
 */
export async function noteEgress(o: {
  session: SandboxSession;
  path: string;
  log: Log;
  phase: string;
}): Promise<string[]> {
  const egress = o.session.egress;
  if (!egress) return [];
  let got: Awaited<ReturnType<typeof egress.refusals>>;
  try {
    got = await egress.refusals();
  } catch (err) {
    o.log.warn(`could not read what the egress proxy refused: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
  const lines = got.entries.flatMap((e) => {
    const p = egressLine.safeParse({
      ...e,
      phase: o.phase,
      host: String(e.host).slice(0, 255),
      reason: String(e.reason).slice(0, 1000),
    });
    return p.success ? [p.data] : [];
  });
  if (lines.length === 0) return [];
  const before = readText(o.path);
  const added = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  if (before.length + added.length <= EGRESS_FILE_CAP) writeHostFile(o.path, before + added);
  const blocked = blockedHosts(lines);
  const targets = blocked.map((b) => b.target);
  const total = lines.reduce((n, l) => n + l.count, 0) + got.dropped;
  const allow = allowLine(blocked.filter((b) => b.allowable).map((b) => b.target));
  o.log.info(
    `egress proxy refused ${total} connection${total === 1 ? '' : 's'} during ${o.phase}: ${named(targets)}${got.dropped > 0 ? ` (and ${got.dropped} not kept)` : ''}${allow ? `; to allow: ${allow}` : ''} (see ${o.path})`,
  );
  return blocked.filter((b) => b.allowable).map((b) => b.target);
}
