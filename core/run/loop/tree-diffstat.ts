import { isTreeId, STUCK_DIFFSTAT_LINES } from '../../decision/stuck.js';
import type { SandboxSession } from '../../ports/sandbox.js';

/** The diffstat command's own time and output ceiling (it runs in the sandbox, outside the decider's budget). */
const DIFFSTAT_TIMEOUT_MS = 5_000;
const DIFFSTAT_MAX_BYTES = 64 * 1024;

/**
 * `git diff --stat` between two loops' trees, run in the sandbox: the tree ids
 * the fingerprint records (core/fingerprint/tree-id.ts) are written there and
 * exist nowhere else (a failed loop's work never comes home). Only checked hex
 * ids are spliced into the command. What the sandbox prints is text for the
 * decider and nothing more; it is cut to its last lines and capped. Null when
 * either tree is unknown or git fails. Computed at most once.
 */
export function treeDiffstat(
  session: SandboxSession,
  trees: { previous: string | null | undefined; current: string | null | undefined },
): () => Promise<string | null> {
  let result: Promise<string | null> | null = null;
  return () => {
    result ??= (async () => {
      const { previous, current } = trees;
      if (!isTreeId(previous) || !isTreeId(current)) return null;
      const r = await session.exec(
        `set -o pipefail; git -c core.fsmonitor=false diff --no-ext-diff --no-textconv --no-color --stat=120 ${previous} ${current} | tail -n ${STUCK_DIFFSTAT_LINES}`,
        { timeoutMs: DIFFSTAT_TIMEOUT_MS, maxOutputBytes: DIFFSTAT_MAX_BYTES },
      );
      return r.exitCode === 0 && !r.timedOut ? r.stdout : null;
    })().catch(() => null);
    return result;
  };
}
