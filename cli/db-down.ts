import { Command } from 'clipanion';
import { stopEmbedded, storeTarget } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class DbDownCommand extends Command {
  static override paths = [['db', 'down']];
  static override usage = Command.Usage({ description: 'stop the embedded database server cleanly' });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const target = storeTarget(config);
    if (target.kind === 'server') {
      this.context.stdout.write('CHALK_DATABASE_URL names a server chalk does not run: nothing to stop\n');
      return 0;
    }
    const stopped = await stopEmbedded(target.paths);
    this.context.stdout.write(stopped ? 'embedded database stopped\n' : 'embedded database was not running\n');
    return 0;
  }
}
