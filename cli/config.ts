import { Command, Option } from 'clipanion';
import { commandContext, table } from './context.js';

export default class ConfigCommand extends Command {
  static override paths = [['config']];
  static override usage = Command.Usage({ description: "print every key's effective value and where it came from" });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const rows = config.display();
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    } else {
      this.context.stdout.write(
        table([['KEY', 'VALUE', 'SOURCE'], ...rows.map((r) => [r.key, r.value === '' ? "''" : r.value, r.source])]),
      );
    }
    return 0;
  }
}
