import { type ContributionPoint, contributionPoint } from '../kernel/kernel.js';

/**
 * What a plugin adds to `chalk decider status` (e.g. decider-local's installation: `host.contribute(DECIDER_STATUS, part)`): read when the
 * command runs, never during a loop. `read` returns null when it has nothing to say (nothing
 * installed); a throw is shown as that part's error, never fails the command.
 */
export interface DeciderStatusPart {
  /** The key of its object in `chalk decider status --json`'s `parts`. */
  id: string;
  read(): Promise<{ json: Record<string, unknown>; lines: string[] } | null>;
}

/** Where plugins add their parts of `chalk decider status`; the command reads them in order. */
export const DECIDER_STATUS: ContributionPoint<DeciderStatusPart> = contributionPoint('decider-status');
