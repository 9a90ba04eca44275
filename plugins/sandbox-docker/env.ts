import { CREDENTIALS, GATEWAY_URL } from '../../core/agent/credentials.js';

/**
 * What reaches a sandbox's environments. The container itself gets only HOME
 * and non-secret extras; the agent credentials, the gateway URL and the
 * telemetry settings go into the environment of the `claude` exec alone (the
 * Docker API's exec Env, never a command line), so the repository's setup and
 * rubric commands never see them.
 */
export const CREDENTIAL_NAMES = [...CREDENTIALS, GATEWAY_URL] as const;

/** Names that must never be passed, whatever a tap asks for. */
const FORBIDDEN =
  /^(GH_|GITHUB_|GITLAB_|GLAB_|CI_JOB_TOKEN$|DOCKER_|CHALK_DATABASE_URL$|CHALK_DECIDER_TOKEN$|OTEL_|ANTHROPIC_|CLAUDE_)|TOKEN|SECRET|PASSWORD|KEY$/;

export const HOST_ALIAS = 'host.docker.internal';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '0.0.0.0', '[::1]', '::1']);

/** A URL whose host is the loopback, rewritten to reach the host from a container; else unchanged. */
export function rewriteLoopback(url: string): { url: string; rewritten: boolean } {
  try {
    const u = new URL(url);
    if (!LOOPBACK.has(u.hostname) && !u.hostname.startsWith('127.')) return { url, rewritten: false };
    u.hostname = HOST_ALIAS;
    // URL keeps a trailing slash for a bare origin; keep the caller's form.
    const out = u.toString();
    return { url: url.endsWith('/') || !out.endsWith('/') ? out : out.slice(0, -1), rewritten: true };
  } catch {
    return { url, rewritten: false };
  }
}

export interface TelemetrySettings {
  endpoint: string;
  protocol: string;
  signals: string[];
  /** Pass the host's OTEL_EXPORTER_OTLP_HEADERS (it often holds a token) only when the person said so. */
  headers: boolean;
}

export interface SandboxEnv {
  /** `KEY=value` entries of the container: HOME and non-secret extras only. */
  container: string[];
  /** Added to the agent CLI's exec environment only: credentials, gateway, telemetry. */
  agent: Record<string, string>;
  /** Set when a loopback URL was rewritten: the container needs `host.docker.internal:host-gateway`. */
  needsHostAlias: boolean;
}

const entries = (m: Map<string, string>) => [...m].map(([k, v]) => `${k}=${v}`);

/**
 * The container's environment (HOME, then extra entries, a forbidden or
 * secret-looking name among them dropped) and the agent's (the credentials
 * set on the host, the gateway, telemetry).
 */
export function sandboxEnv(
  hostEnv: NodeJS.ProcessEnv,
  telemetry: TelemetrySettings | null,
  extra: Record<string, string> = {},
): SandboxEnv {
  const container = new Map<string, string>([['HOME', '/home/chalk']]);
  // (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB would keep the key from the agent's own shell, but needs
  // bubblewrap, which cannot make namespaces in this unprivileged container: docs/threat-model.md.)
  const agent = new Map<string, string>();
  let needsHostAlias = false;
  for (const name of CREDENTIAL_NAMES) {
    const v = hostEnv[name];
    if (v === undefined || v === '') continue;
    if (name === GATEWAY_URL) {
      const r = rewriteLoopback(v);
      needsHostAlias ||= r.rewritten;
      agent.set(name, r.url);
    } else {
      agent.set(name, v);
    }
  }
  if (telemetry && telemetry.endpoint !== '') {
    const r = rewriteLoopback(telemetry.endpoint);
    needsHostAlias ||= r.rewritten;
    agent.set('CLAUDE_CODE_ENABLE_TELEMETRY', '1');
    agent.set('OTEL_EXPORTER_OTLP_ENDPOINT', r.url);
    agent.set('OTEL_EXPORTER_OTLP_PROTOCOL', telemetry.protocol);
    for (const s of ['traces', 'metrics', 'logs']) {
      agent.set(`OTEL_${s.toUpperCase()}_EXPORTER`, telemetry.signals.includes(s) ? 'otlp' : 'none');
    }
    const headers = hostEnv.OTEL_EXPORTER_OTLP_HEADERS;
    if (telemetry.headers && headers) agent.set('OTEL_EXPORTER_OTLP_HEADERS', headers);
  }
  for (const [k, v] of Object.entries(extra)) {
    if (FORBIDDEN.test(k) || k === 'HOME') continue;
    container.set(k, v);
  }
  return { container: entries(container), agent: Object.fromEntries(agent), needsHostAlias };
}
