import type Dockerode from 'dockerode';
import { UserError } from '../../core/plugin.js';

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

/** How a connection to the engine fails when the engine is not there, or goes away mid-run. */
const GONE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'EHOSTUNREACH', 'ETIMEDOUT']);

/**
 * A broken connection to the engine, said in one line for the person (the
 * run stops there; the run record lets the next `chalk run` go on); any other
 * error as it is.
 */
export function engineGone(err: unknown): unknown {
  const e = err as { code?: string; message?: string } | null;
  const gone = (e?.code && GONE.has(e.code)) || /socket hang up/.test(e?.message ?? '');
  if (!gone || err instanceof UserError) return err;
  const why = (e?.message ?? String(err)).split('\n')[0];
  return new UserError(
    `the Docker engine went away (${why}); the sandbox and what it held are lost: start Docker, then run the ticket again`,
  );
}
