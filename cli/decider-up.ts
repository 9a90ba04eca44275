import { Command } from 'clipanion';
import { deciderUp, describeInstalled } from '../plugins/decider-local/up.js';
import { commandContext } from './context.js';

export default class DeciderUpCommand extends Command {
  static override paths = [['decider', 'up']];
  static override usage = Command.Usage({
    description:
      'install strands-decider (uv) and the embedding model, start both on 127.0.0.1 and measure the median answer time',
  });

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const out = (l: string) => this.context.stdout.write(`${l}\n`);
    const { started, installed } = await deciderUp({ config, say: out });
    out(started ? 'the local decider is up' : 'the local decider is already running');
    for (const line of describeInstalled(installed)) out(`  ${line}`);
    return 0;
  }
}
