/**
 * What reaches a sandbox's environments. The container itself gets HOME, its way out (the
 * egress proxy, for every tool) and non-secret extras; the agent exec alone gets the model
 * gateway, the run's token and the telemetry settings (the Docker API's exec Env, never a
 * command line). No credential of the person's is in either: the gateway holds it, outside.
 */

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
  /** `KEY=value` entries of the container: HOME, the proxy, non-secret extras. */
  container: string[];
  /** Added to the agent CLI's exec environment only: the gateway, the run's token, telemetry. */
  agent: Record<string, string>;
}

/** The run's way out, as the sandbox is given it (egress/run-net.ts). */
export interface SandboxNet {
  containerEnv: readonly string[];
  agentEnv: Readonly<Record<string, string>>;
}

const entries = (m: Map<string, string>) => [...m].map(([k, v]) => `${k}=${v}`);

/**
 * The container's environment (HOME, the proxy entries, then extra entries, a forbidden or
 * secret-looking name among them dropped) and the agent's (the gateway and the run's token,
 * telemetry). The telemetry endpoint is used as written: the sandbox reaches it through the
 * egress proxy, which must allow it.
 */
export function sandboxEnv(
  hostEnv: NodeJS.ProcessEnv,
  telemetry: TelemetrySettings | null,
  net: SandboxNet,
  extra: Record<string, string> = {},
): SandboxEnv {
  const container = new Map<string, string>([['HOME', '/home/chalk']]);
  for (const e of net.containerEnv) {
    const cut = e.indexOf('=');
    container.set(e.slice(0, cut), e.slice(cut + 1));
  }
  const agent = new Map<string, string>(Object.entries(net.agentEnv));
  if (telemetry && telemetry.endpoint !== '') {
    agent.set('CLAUDE_CODE_ENABLE_TELEMETRY', '1');
    agent.set('OTEL_EXPORTER_OTLP_ENDPOINT', telemetry.endpoint);
    agent.set('OTEL_EXPORTER_OTLP_PROTOCOL', telemetry.protocol);
    for (const s of ['traces', 'metrics', 'logs']) {
      agent.set(`OTEL_${s.toUpperCase()}_EXPORTER`, telemetry.signals.includes(s) ? 'otlp' : 'none');
    }
    const headers = hostEnv.OTEL_EXPORTER_OTLP_HEADERS;
    if (telemetry.headers && headers) agent.set('OTEL_EXPORTER_OTLP_HEADERS', headers);
  }
  for (const [k, v] of Object.entries(extra)) {
    if (FORBIDDEN.test(k) || k === 'HOME' || container.has(k)) continue;
    container.set(k, v);
  }
  return { container: entries(container), agent: Object.fromEntries(agent) };
}
