import type Dockerode from 'dockerode';

let client: Promise<Dockerode> | undefined;

/**
 * The Docker API client, imported on first use so that commands which never
 * touch Docker do not pay for loading dockerode. DOCKER_HOST and friends are
 * honoured by docker-modem.
 */
export function docker(): Promise<Dockerode> {
  client ??= import('dockerode').then(({ default: Docker }) => new Docker());
  return client;
}

/** A Docker API error's status code (404: no such container or image), if any. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The first line of a Docker API error, without dockerode's "(HTTP code …)" prefix noise. */
export function describeDockerError(err: unknown): string {
  const e = err as { json?: { message?: string }; message?: string; code?: string } | null;
  if (e?.code === 'ENOENT' || e?.code === 'ECONNREFUSED' || e?.code === 'EACCES') {
    return `cannot reach the Docker engine (${e.code}); start Docker and try again`;
  }
  const msg = e?.json?.message ?? e?.message ?? String(err);
  return msg.split('\n')[0] ?? msg;
}
