import { Command, Option } from 'clipanion';
import { dbStatus } from '../core/store/db-status.js';
import { storeTarget, storeTimeoutMs } from '../core/store/index.js';
import { commandContext, table } from './context.js';

const mib = (n: number | null) => (n === null ? '-' : `${(n / 1024 / 1024).toFixed(1)} MiB`);

export default class DbStatusCommand extends Command {
  static override paths = [['db', 'status']];
  static override usage = Command.Usage({
    description: 'show where the database is, its version, extensions and row counts',
  });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const target = storeTarget(config);
    const s = await dbStatus(target, storeTimeoutMs(config));
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
      return s.error ? 1 : 0;
    }
    const rows: string[][] = [];
    if (s.kind === 'embedded') {
      rows.push(['kind', 'embedded PGlite']);
      rows.push(['state', s.running ? `running (pid ${s.pid})` : 'stopped (starts on demand; chalk db up)']);
      rows.push(['socket', s.socket ?? '-']);
      rows.push(['data', `${s.dataDir} (${mib(s.dataBytes)})`]);
    } else {
      rows.push(['kind', 'Postgres server (CHALK_DATABASE_URL)']);
      rows.push(['server', s.where]);
    }
    if (s.info) {
      rows.push(['version', `Postgres ${s.info.serverVersion}`]);
      rows.push(['schema', `v${s.info.schemaVersion}`]);
      rows.push(['extensions', s.info.extensions.join(', ')]);
      rows.push(['semantic recall', s.info.semanticRecall ? 'available (pgvector)' : 'unavailable (no pgvector)']);
      rows.push([
        'rows',
        Object.entries(s.info.rows)
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
      ]);
    }
    if (s.error) rows.push(['error', s.error]);
    this.context.stdout.write(table(rows));
    return s.error ? 1 : 0;
  }
}
