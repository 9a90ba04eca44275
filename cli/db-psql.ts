import { spawnSync } from 'node:child_process';
import { Command } from 'clipanion';
import { UserError } from '../core/errors.js';
import { ensureEmbedded, storeTarget, storeTimeoutMs } from '../core/store/index.js';
import { psqlEnvironment } from '../core/store/psql.js';
import { commandContext } from './context.js';

export default class DbPsqlCommand extends Command {
  static override paths = [['db', 'psql']];
  static override usage = Command.Usage({ description: 'open psql on the database' });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const target = storeTarget(config);
    if (target.kind === 'embedded') await ensureEmbedded(target.paths, storeTimeoutMs(config));
    // The connection goes through PG* variables, so no password ever reaches argv.
    const r = spawnSync('psql', [], { stdio: 'inherit', env: { ...process.env, ...psqlEnvironment(target) } });
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
      throw new UserError(
        'psql is not installed: install the Postgres client (apt install postgresql-client, brew install libpq) or use the URL from `chalk db url`',
        127,
      );
    }
    return r.status ?? 1;
  }
}
