/**
 * The agent's credentials, by the names the `claude` CLI reads, any one of
 * which is enough. The one list: the run's refusal, `chalk doctor`, the demo
 * and the sandbox (which hands them to the `claude` process only) read it.
 */
export const CREDENTIALS = ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'] as const;

/** Not a secret, but the CLI's own setting that goes with the credential: where the API is. */
export const GATEWAY_URL = 'ANTHROPIC_BASE_URL';

export function hasCredential(env: NodeJS.ProcessEnv): boolean {
  return CREDENTIALS.some((k) => (env[k] ?? '') !== '');
}
