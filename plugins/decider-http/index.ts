import type { Config } from '../../core/config/config.js';
import { HOSTED_DECIDER } from '../../core/decision/select.js';
import { displayUrl, untrustedReason } from '../../core/decision/trust.js';
import { UserError } from '../../core/errors.js';
import type { Plugin } from '../../core/kernel/kernel.js';
import { Tokens } from '../../core/kernel/tokens.js';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_LIMIT, type DeciderEntry, parseLimit } from '../../core/protocol/entry.js';
import { HttpDecider } from './client.js';
import { deciderChecks } from './doctor.js';
import { DECIDER_HTTP_KEYS } from './keys.js';

/** Optional keys a later configuration may declare; absent keys take the defaults. */
const LIMIT_KEY = 'CHALK_DECIDER_LIMIT';
const CONTEXT_KEY = 'CHALK_DECIDER_CONTEXT_TOKENS';

function optional(config: Config, key: string): string | null {
  return config.entries.has(key) && config.str(key) !== '' ? config.str(key) : null;
}

/** The decider entry the configuration declares: CHALK_DECIDER_URL, its limit and its context ceiling. */
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

export function httpDeciderFromConfig(config: Config, env: NodeJS.ProcessEnv = process.env): HttpDecider {
  const url = config.str('CHALK_DECIDER_URL');
  const entry = entryFromConfig(config);
  return new HttpDecider({
    entry,
    url,
    token: config.str('CHALK_DECIDER_TOKEN'),
    untrusted: () => untrustedReason(url, 'CHALK_DECIDER_URL', env),
  });
}

/**
 * The hosted decider: any server speaking decider protocol v1 at CHALK_DECIDER_URL, offered
 * as `hosted`; core's rule (core/decision/select.ts) decides whether it is the one bound.
 */
const plugin: Plugin = {
  name: 'decider-http',
  configuration: DECIDER_HTTP_KEYS,
  register(kernel) {
    kernel.offer('Decider', HOSTED_DECIDER, { useFactory: () => httpDeciderFromConfig(kernel.config) });
    kernel.checks.push(...deciderChecks(kernel.config, () => kernel.resolve(Tokens.Decider)));
  },
};
export default plugin;
