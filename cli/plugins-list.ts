import { Command, Option } from 'clipanion';
import { listPlugins } from '../core/setup/plugins.js';
import { commandContext, table } from './context.js';

const STATUS = {
  trusted: 'trusted',
  changed: 'CHANGED since trusted',
  untrusted: 'NOT trusted',
  'not-needed': 'no trust needed (environment)',
  error: 'cannot be found or hashed',
} as const;

export default class PluginsListCommand extends Command {
  static override paths = [['plugins'], ['plugins', 'list']];
  static override usage = Command.Usage({
    description: 'each plugin CHALK_PLUGINS names: where it comes from, its real path, content hash and trust',
  });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const { root, config } = await commandContext();
    const rows = listPlugins(config, { root: root ?? process.cwd() });
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      this.context.stdout.write('no plugins: CHALK_PLUGINS is not set\n');
      return 0;
    }
    this.context.stdout.write(
      table([
        ['PLUGIN', 'SOURCE', 'TRUST', 'HASH', 'PATH'],
        ...rows.map((r) => [
          r.spec,
          r.source,
          STATUS[r.status],
          r.hash ? r.hash.slice(0, 'sha256:'.length + 12) : '-',
          r.path ?? r.detail ?? '-',
        ]),
      ]),
    );
    return 0;
  }
}
