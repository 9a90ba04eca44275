import { UserError } from '../errors.js';

/**
 * Turns a connection failure into one line naming the host (never the password) and
 * what to check. Errors from queries on a working connection are not connection problems.
 */
export function connectionError(
  err: unknown,
  where: string,
  kind: 'embedded' | 'server',
  setting = 'CHALK_DATABASE_URL',
): Error {
  if (err instanceof UserError) return err;
  const e = err as NodeJS.ErrnoException & { code?: string; message?: string };
  const code = e?.code ?? '';
  const msg = (e?.message ?? String(err)).split('\n')[0] ?? '';
  if (kind === 'embedded') {
    return new UserError(`cannot reach the embedded database at ${where} (${msg}); check \`chalk db status\``);
  }
  const check: Record<string, string> = {
    ECONNREFUSED: 'is the server running and listening on that host and port?',
    ENOTFOUND: `is the host name in ${setting} right?`,
    EAI_AGAIN: `is the host name in ${setting} right, and DNS reachable?`,
    ETIMEDOUT: 'is the host reachable from this machine (firewall, VPN)?',
    EHOSTUNREACH: 'is the host reachable from this machine (firewall, VPN)?',
    '28P01': `check the user and password in ${setting}`,
    '28000': "check the server's pg_hba.conf allows this user from this machine",
    '3D000': `check the database name in ${setting} (create it first)`,
    '42501': 'the user needs CREATE on the database to apply the schema',
  };
  const hint =
    check[code] ??
    (/timeout/i.test(msg)
      ? 'is the host reachable from this machine (firewall, VPN)? CHALK_DB_TIMEOUT sets the wait'
      : /terminated unexpectedly|ECONNRESET/i.test(msg)
        ? 'the server closed the connection: is it Postgres, and does it accept this client (pg_hba.conf; add ?sslmode=require if it needs SSL)?'
        : `check ${setting} and that the server accepts connections`);
  // pg messages name users and databases, never passwords; strip any URL just in case.
  const safe = msg.replace(/postgres(ql)?:\/\/\S+/g, '<url>');
  return new UserError(`cannot use the Postgres server at ${where}: ${safe}; ${hint}`);
}
