import type { Config } from '../config/config.js';
import { type EmbeddedPaths, embeddedPaths } from './embedded/paths.js';

/** Which database a command uses: the embedded server, or the one CHALK_DATABASE_URL names. */
export type StoreTarget = { kind: 'embedded'; paths: EmbeddedPaths } | { kind: 'server'; url: string };

export function storeTarget(config: Config, env: NodeJS.ProcessEnv = process.env): StoreTarget {
  const url = config.str('CHALK_DATABASE_URL');
  return url ? { kind: 'server', url } : { kind: 'embedded', paths: embeddedPaths(env) };
}

/**
 * How long to wait for the database: CHALK_DB_TIMEOUT seconds; `auto` is 120 for the embedded
 * server (its first start makes the database) and 15 for a server (to connect). The kind is the
 * configured target's unless given.
 */
export function storeTimeoutMs(
  config: Config,
  kind: StoreTarget['kind'] = config.str('CHALK_DATABASE_URL') ? 'server' : 'embedded',
): number {
  const raw = config.str('CHALK_DB_TIMEOUT');
  if (raw !== 'auto') return Number(raw) * 1000;
  return (kind === 'server' ? 15 : 120) * 1000;
}

/** host[:port]/database of a connection string: never the user's password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    return `${host}${u.port ? `:${u.port}` : ''}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'the server in CHALK_DATABASE_URL';
  }
}

/** The connection string without its password (for printing). */
export function urlWithoutPassword(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return '';
  }
}

/** A connection string for the embedded server that psql and pg both understand. */
export function embeddedUrl(paths: EmbeddedPaths): string {
  return `postgresql://postgres@/postgres?host=${encodeURIComponent(paths.dir)}`;
}
