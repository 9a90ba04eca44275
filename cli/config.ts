import { Command, Option } from 'clipanion';
import { commandContext, table, withNamedPlugins } from './context.js';

export default class ConfigCommand extends Command {
  static override paths = [['config']];
  static override usage = Command.Usage({
    description: "print every key's effective value, where it came from and who declared it (core or a plugin)",
  });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    // The plugins CHALK_PLUGINS names are imported (never registered) so their keys are listed too.
    const { config } = await withNamedPlugins(await commandContext());
    const rows = config.display();
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else {
      this.context.stdout.write(
        table([
          ['KEY', 'VALUE', 'SOURCE', 'PLUGIN'],
          ...rows.map((r) => [r.key, r.value === '' ? "''" : r.value, r.source, r.plugin]),
        ]),
      );
    }
    return 0;
  }
}
