import { EMBEDDED_PORT } from './embedded/paths.js';
import type { StoreTarget } from './target.js';

/** libpq environment variables that point psql (or any libpq client) at the store, password included only in the environment. */
export function psqlEnvironment(target: StoreTarget): Record<string, string> {
  if (target.kind === 'embedded') {
    return { PGHOST: target.paths.dir, PGPORT: String(EMBEDDED_PORT), PGUSER: 'postgres', PGDATABASE: 'postgres' };
  }
  const u = new URL(target.url);
  const env: Record<string, string> = {};
  const host = u.hostname || u.searchParams.get('host');
  if (host) env.PGHOST = decodeURIComponent(host);
  if (u.port) env.PGPORT = u.port;
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const db = u.pathname.replace(/^\//, '');
  if (db) env.PGDATABASE = decodeURIComponent(db);
  const ssl = u.searchParams.get('sslmode');
  if (ssl) env.PGSSLMODE = ssl;
  return env;
}
