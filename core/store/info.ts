import type { Pool } from 'pg';
import type { StoreInfo } from '../ports/store.js';
import { readShape } from './shape.js';

/** Version, extensions, schema version and row counts, for `chalk db status` and `chalk doctor`. */
export async function storeInfo(db: Pool, kind: StoreInfo['kind'], where: string): Promise<StoreInfo> {
  const v = await db.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
  const ext = await db.query<{ extname: string; extversion: string }>(
    'SELECT extname, extversion FROM pg_extension ORDER BY extname',
  );
  const sv = await db.query<{ version: number }>(`SELECT version FROM chalk_schema WHERE id = 1`);
  const counts = await db.query<{ runs: string; events: string; lessons: string; decisions: string }>(
    `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM events) AS events,
            (SELECT count(*) FROM lessons) AS lessons, (SELECT count(*) FROM decisions) AS decisions`,
  );
  const c = counts.rows[0];
  const shape = await readShape(db);
  return {
    kind,
    where,
    serverVersion: v.rows[0]?.v ?? '',
    extensions: ext.rows.map((e) => `${e.extname} ${e.extversion}`),
    schemaVersion: sv.rows[0]?.version ?? null,
    semanticRecall: shape.vector,
    rows: {
      runs: Number(c?.runs ?? 0),
      events: Number(c?.events ?? 0),
      lessons: Number(c?.lessons ?? 0),
      decisions: Number(c?.decisions ?? 0),
    },
  };
}
