import { Command } from 'clipanion';
import { embeddedUrl, storeTarget, urlWithoutPassword } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class DbUrlCommand extends Command {
  static override paths = [['db', 'url']];
  static override usage = Command.Usage({
    description: 'print a connection string for the database (a server URL is printed without its password)',
  });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const target = storeTarget(config);
    if (target.kind === 'embedded') {
      this.context.stdout.write(`${embeddedUrl(target.paths)}\n`);
      return 0;
    }
    const bare = urlWithoutPassword(target.url);
    this.context.stdout.write(`${bare}\n`);
    if (bare !== target.url) this.context.stderr.write('(password omitted: give it with PGPASSWORD or ~/.pgpass)\n');
    return 0;
  }
}
