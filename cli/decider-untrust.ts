import { Command, Option } from 'clipanion';
import { displayUrl, untrust } from '../core/decision/trust.js';

export default class DeciderUntrustCommand extends Command {
  static override paths = [['decider', 'untrust']];
  static override usage = Command.Usage({ description: 'take back the trust given to a decider or embedding URL' });
  url = Option.String({ required: true });

  async execute(): Promise<number> {
    const shown = displayUrl(this.url);
    const removed = untrust(this.url);
    this.context.stdout.write(
      removed ? `${shown} is no longer trusted: nothing is sent to it\n` : `${shown} was not trusted on this machine\n`,
    );
    return 0;
  }
}
