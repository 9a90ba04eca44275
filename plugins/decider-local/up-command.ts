import type { CommandClass } from 'clipanion';
import type { PluginCommandContext } from '../../core/plugin.js';
import { deciderDown, deciderUp, describeInstalled } from './up.js';

type Clipanion = typeof import('clipanion');

/** `chalk decider up`: install and start the local decider and embedding service, then measure. */
export function deciderUpCommand({ Command }: Clipanion): CommandClass<PluginCommandContext> {
  return class DeciderUpCommand extends Command<PluginCommandContext> {
    static override paths = [['decider', 'up']];
    static override usage = Command.Usage({
      description:
        'install strands-decider (uv) and the embedding model, start both on 127.0.0.1 and measure the median answer time',
    });

    async execute(): Promise<number> {
      const out = (l: string) => this.context.stdout.write(`${l}\n`);
      const { started, installed } = await deciderUp({ config: this.context.config, say: out });
      out(started ? 'the local decider is up' : 'the local decider is already running');
      for (const line of describeInstalled(installed)) out(`  ${line}`);
      return 0;
    }
  };
}

/** `chalk decider down`: stop what `up` started. */
export function deciderDownCommand({ Command }: Clipanion): CommandClass<PluginCommandContext> {
  return class DeciderDownCommand extends Command<PluginCommandContext> {
    static override paths = [['decider', 'down']];
    static override usage = Command.Usage({ description: 'stop the local decider and embedding service' });

    async execute(): Promise<number> {
      const stopped = await deciderDown();
      this.context.stdout.write(
        stopped.length > 0 ? `stopped: ${stopped.join(', ')}\n` : 'the local decider was not running\n',
      );
      return 0;
    }
  };
}
