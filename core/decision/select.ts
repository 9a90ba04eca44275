import type { Config } from '../config/config.js';
import type { Offer } from '../kernel/kernel.js';

/**
 * The decider rule, over what the offers declare. CHALK_DECIDER_PROVIDER names one (any
 * plugin's); `auto` picks the last-offered decider whose declaration fits the configuration
 * (decider-local's fits a loopback CHALK_DECIDER_URL once installed, decider-http's any URL; a
 * later plugin's offer is preferred). Null when none fits: nothing is bound, and a command
 * that asks for a decider is told no plugin provides one.
 */
export function selectDecider(config: Config, offers: readonly Offer[]): string | null {
  const chosen = config.str('CHALK_DECIDER_PROVIDER');
  if (chosen !== 'auto') return chosen;
  return offers.findLast((o) => o.auto?.(config) === true)?.name ?? null;
}
