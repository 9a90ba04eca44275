import { isLocalUrl, untrustedReason } from '../../../core/decider.js';
import { type Config, type Plugin, Tokens } from '../../../core/plugin.js';
import { touch } from '../client.js';
import { localDeciderPaths } from '../paths.js';
import { EmbedClient } from './client.js';

/** The Embedder at CHALK_EMBED_URL: nothing is sent to an untrusted address; a local one keeps the idle clock. */
export function embedClientFromConfig(config: Config, env: NodeJS.ProcessEnv = process.env): EmbedClient {
  const url = config.str('CHALK_EMBED_URL');
  const lastUsed = localDeciderPaths(env).lastUsed;
  return new EmbedClient({
    url,
    untrusted: () => untrustedReason(url, 'CHALK_EMBED_URL', env),
    ...(isLocalUrl(url) ? { onUse: () => touch(lastUsed) } : {}),
  });
}

/**
 * Embeddings for semantic lesson recall: binds the Embedder port to the OpenAI-compatible
 * service at CHALK_EMBED_URL (the local one `chalk decider up` starts, or any other).
 */
const plugin: Plugin = {
  name: 'embed-local',
  register(kernel) {
    kernel.bind(Tokens.Embedder, { useFactory: () => embedClientFromConfig(kernel.config) });
  },
};
export default plugin;
