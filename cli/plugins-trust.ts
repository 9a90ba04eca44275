import { Command } from 'clipanion';
import { trustFilePlugins } from '../core/setup/plugins.js';
import { commandContext } from './context.js';

export default class PluginsTrustCommand extends Command {
  static override paths = [['plugins', 'trust']];
  static override usage = Command.Usage({
    description:
      "acknowledge, on this machine, the plugins this repository's .chalk/config names (by real path and content hash)",
  });

  async execute(): Promise<number> {
    const { root } = await commandContext();
    const trusted = trustFilePlugins(root);
    if (trusted.length === 0) {
      this.context.stdout.write('.chalk/config names no plugins (CHALK_PLUGINS): nothing to trust\n');
      return 0;
    }
    for (const p of trusted) {
      this.context.stdout.write(`${p.added ? 'trusted' : 'already trusted'} ${p.spec}  ${p.path}  ${p.hash}\n`);
    }
    return 0;
  }
}
