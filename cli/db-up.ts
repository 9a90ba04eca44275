import { Command } from 'clipanion';
import { ensureEmbedded, PgStore, storeTarget, storeTimeoutMs } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class DbUpCommand extends Command {
  static override paths = [['db', 'up']];
  static override usage = Command.Usage({
    description: 'start the embedded database (or check the CHALK_DATABASE_URL server) and apply the schema',
  });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const target = storeTarget(config);
    const timeout = storeTimeoutMs(config);
    const started = target.kind === 'embedded' ? (await ensureEmbedded(target.paths, timeout)).started : false;
    const store = await PgStore.open(target, timeout);
    try {
      const info = await store.info();
      const verb = target.kind === 'embedded' ? (started ? 'started' : 'already running') : 'reachable';
      this.context.stdout.write(
        `database ${verb}: ${info.where} (Postgres ${info.serverVersion}, schema v${info.schemaVersion})\n`,
      );
    } finally {
      await store.close();
    }
    return 0;
  }
}
