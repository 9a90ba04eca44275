/**
 * What reaches the container's environment. Only agent credentials by their
 * own names, a gateway URL and telemetry settings: never a forge token. They go
 * in through the Docker API's container Env, never on a command line.
 */
export const CREDENTIAL_NAMES = [
  'ANTHROPIC_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
] as const;

/** Names that must never be passed, whatever a tap asks for. */
const FORBIDDEN =
  /^(GH_|GITHUB_|GITLAB_|GLAB_|CI_JOB_TOKEN$|DOCKER_|CHALK_DATABASE_URL$|CHALK_DECIDER_TOKEN$)|TOKEN$|SECRET|PASSWORD/;

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
}

export interface ContainerEnv {
  /** `KEY=value` entries for the Docker API. */
  env: string[];
  /** Set when a loopback URL was rewritten: the container needs `host.docker.internal:host-gateway`. */
  needsHostAlias: boolean;
}

/**
 * The container's environment: HOME, the agent credentials that are set on
 * the host, telemetry, then extra non-secret entries (a forbidden name among
 * them is dropped).
 */
export function containerEnv(
  hostEnv: NodeJS.ProcessEnv,
  telemetry: TelemetrySettings | null,
  extra: Record<string, string> = {},
): ContainerEnv {
  const out = new Map<string, string>([['HOME', '/home/chalk']]);
  let needsHostAlias = false;
  for (const name of CREDENTIAL_NAMES) {
    const v = hostEnv[name];
    if (v === undefined || v === '') continue;
    if (name === 'ANTHROPIC_BASE_URL') {
      const r = rewriteLoopback(v);
      needsHostAlias ||= r.rewritten;
      out.set(name, r.url);
    } else {
      out.set(name, v);
    }
  }
  if (telemetry && telemetry.endpoint !== '') {
    const r = rewriteLoopback(telemetry.endpoint);
    needsHostAlias ||= r.rewritten;
    out.set('CLAUDE_CODE_ENABLE_TELEMETRY', '1');
    out.set('OTEL_EXPORTER_OTLP_ENDPOINT', r.url);
    out.set('OTEL_EXPORTER_OTLP_PROTOCOL', telemetry.protocol);
    for (const s of ['traces', 'metrics', 'logs']) {
      out.set(`OTEL_${s.toUpperCase()}_EXPORTER`, telemetry.signals.includes(s) ? 'otlp' : 'none');
    }
    const headers = hostEnv.OTEL_EXPORTER_OTLP_HEADERS;
    if (headers) out.set('OTEL_EXPORTER_OTLP_HEADERS', headers);
  }
  for (const [k, v] of Object.entries(extra)) {
    if (FORBIDDEN.test(k) || (CREDENTIAL_NAMES as readonly string[]).includes(k) || k === 'HOME') continue;
    out.set(k, v);
  }
  return { env: [...out].map(([k, v]) => `${k}=${v}`), needsHostAlias };
}
