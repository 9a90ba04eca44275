import type { Config } from '../config/config.js';
import { isLocalUrl } from './trust.js';

/** The decider that runs on this machine (a later plugin offers it), and any decider reached over HTTP. */
export const LOCAL_DECIDER = 'local';
export const HOSTED_DECIDER = 'hosted';

/**
 * The decider rule, over the names plugins offered. CHALK_DECIDER_PROVIDER names one
 * (any plugin's); `auto` picks `local` when CHALK_DECIDER_URL is on this machine's loopback
 * and a local decider is offered, else `hosted`. Null when auto finds neither: nothing is
 * bound, and a command that asks for a decider is told no plugin provides one.
 */
export function selectDecider(config: Config, offered: readonly string[]): string | null {
  const chosen = config.str('CHALK_DECIDER_PROVIDER');
  if (chosen !== 'auto') return chosen;
  if (isLocalUrl(config.str('CHALK_DECIDER_URL')) && offered.includes(LOCAL_DECIDER)) return LOCAL_DECIDER;
  return offered.includes(HOSTED_DECIDER) ? HOSTED_DECIDER : null;
}
