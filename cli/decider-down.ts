import { Command } from 'clipanion';
import { deciderDown } from '../plugins/decider-local/up.js';

export default class DeciderDownCommand extends Command {
  static override paths = [['decider', 'down']];
  static override usage = Command.Usage({ description: 'stop the local decider and embedding service' });

  async execute(): Promise<number> {
    const stopped = await deciderDown();
    this.context.stdout.write(
      stopped.length > 0 ? `stopped: ${stopped.join(', ')}\n` : 'the local decider was not running\n',
    );
    return 0;
  }
}
