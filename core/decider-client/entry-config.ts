import type { Config } from '../config/config.js';
import { displayUrl } from '../decision/trust.js';
import { UserError } from '../errors.js';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_LIMIT, type DeciderEntry, parseLimit } from '../protocol/entry.js';

/** Optional keys a decider plugin may declare (decider-http does); absent keys take the defaults. */
const LIMIT_KEY = 'CHALK_DECIDER_LIMIT';
const CONTEXT_KEY = 'CHALK_DECIDER_CONTEXT_TOKENS';

function optional(config: Config, key: string): string | null {
  return config.entries.has(key) && config.str(key) !== '' ? config.str(key) : null;
}

/**
 * The decider entry the configuration declares: CHALK_DECIDER_URL, its limit and its context
 * ceiling. Shared by every provider reached over HTTP at that URL (the hosted and the local one).
 */
export function entryFromConfig(config: Config): DeciderEntry {
  const limitText = optional(config, LIMIT_KEY);
  let limit = DEFAULT_LIMIT;
  if (limitText) {
    try {
      limit = parseLimit(limitText, LIMIT_KEY);
    } catch (err) {
      throw new UserError((err as Error).message);
    }
  }
  const ctx = optional(config, CONTEXT_KEY);
  return {
    id: 'decider',
    url: displayUrl(config.str('CHALK_DECIDER_URL')),
    maxContextTokens: ctx && /^[1-9][0-9]*$/.test(ctx) ? Number(ctx) : DEFAULT_CONTEXT_TOKENS,
    limit,
  };
}
