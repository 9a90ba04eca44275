import pg from 'pg';
import { UserError } from '../../errors.js';
import { connectionError } from '../errors.js';
import { applySchema } from '../schema.js';
import { describeUrl } from '../target.js';

/**
 * Opens the database `chalk db copy` writes to and brings it to this Chalk's schema, after
 * checking it is either empty or Chalk's own: a database holding other tables is refused before
 * anything is written to it. Every failure is one line naming the host (never the password) and
 * `setting`, where the URL came from.
 */
export async function openCopyTarget(url: string, timeoutMs: number, setting: string): Promise<pg.Pool> {
  const where = describeUrl(url);
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs });
  pool.on('error', () => {});
  try {
    const r = await pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c
       WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relnamespace = current_schema()::regnamespace
       ORDER BY c.relname`,
    );
    const names = r.rows.map((x) => x.name);
    if (names.length > 0 && !names.includes('chalk_schema')) {
      const some = names.slice(0, 3).join(', ') + (names.length > 3 ? ', ...' : '');
      throw new UserError(
        `the database at ${where} is not empty and not Chalk's (${names.length} ${names.length === 1 ? 'table' : 'tables'}: ${some}): give ${setting} an empty database, or the one your team's Chalk uses`,
      );
    }
    await applySchema(pool);
    return pool;
  } catch (err) {
    await pool.end().catch(() => {});
    throw connectionError(err, where, 'server', setting);
  }
}
