import { Command, Option } from 'clipanion';
import { runStatus } from './status-run.js';

export default class StatusCommand extends Command {
  static override paths = [['status']];
  static override usage = Command.Usage({
    description: "this repository's tickets, most recently active first: state, loops, cost, fixes, detentions",
  });
  json = Option.Boolean('--json', false);

  execute(): Promise<number> {
    return runStatus({ json: this.json }, this.context);
  }
}
