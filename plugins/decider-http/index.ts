import { entryFromConfig, HttpDecider, untrustedReason } from '../../core/decider.js';
import { type Config, type Plugin, Tokens } from '../../core/plugin.js';
import { deciderChecks } from './doctor.js';
import { DECIDER_HTTP_KEYS } from './keys.js';

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

/** The name this plugin offers its decider under (CHALK_DECIDER_PROVIDER=hosted). */
export const HOSTED_DECIDER = 'hosted';

/**
 * The hosted decider: any server speaking decider protocol v1 at CHALK_DECIDER_URL, offered
 * as `hosted` and declared to fit any URL, so core's rule (core/decision/select.ts) binds it
 * under `auto` unless a later offer fits too (the local decider, for a loopback URL).
 */
const plugin: Plugin = {
  name: 'decider-http',
  configuration: DECIDER_HTTP_KEYS,
  register(kernel) {
    kernel.offer(
      'Decider',
      HOSTED_DECIDER,
      { useFactory: () => httpDeciderFromConfig(kernel.config) },
      { auto: () => true },
    );
    kernel.checks.push(...deciderChecks(kernel.config, () => kernel.resolve(Tokens.Decider)));
  },
};
export default plugin;
