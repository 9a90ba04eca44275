import type { Config } from '../config/config.js';
import type { CheckResult, DoctorCheck } from '../kernel/doctor.js';
import { PgStore } from './pg-store.js';

/**
 * `chalk doctor`'s database lines: whether the store opens (starting the embedded server
 * if needed) and, once, that semantic recall is unavailable when the server has no pgvector.
 */
export function databaseCheck(config: Config): DoctorCheck {
  return {
    id: 'database',
    async run(): Promise<CheckResult[]> {
      let store: PgStore;
      try {
        store = await PgStore.forConfig(config);
      } catch (err) {
        return [{ status: 'FAIL', label: 'database', detail: err instanceof Error ? err.message : String(err) }];
      }
      try {
        const i = await store.info();
        const what = i.kind === 'embedded' ? 'embedded PGlite' : 'Postgres server';
        const lines: CheckResult[] = [
          {
            status: 'ok',
            label: 'database',
            detail: `${what} ${i.serverVersion} at ${i.where}, schema v${i.schemaVersion}, ${i.rows.runs} calls, ${i.rows.lessons} lessons`,
          },
        ];
        if (!i.semanticRecall) {
          lines.push({
            status: '--',
            label: 'semantic recall',
            detail: 'unavailable: the database has no pgvector, so lessons are recalled by text similarity only',
          });
        }
        return lines;
      } finally {
        await store.close();
      }
    },
  };
}
