import { Command, Option } from 'clipanion';
import { untrustPlugins } from '../core/setup/plugins.js';
import { commandContext } from './context.js';

export default class PluginsUntrustCommand extends Command {
  static override paths = [['plugins', 'untrust']];
  static override usage = Command.Usage({
    description: "take back the trust of one plugin, or of every plugin this repository's .chalk/config names",
  });
  spec = Option.String({ required: false });

  async execute(): Promise<number> {
    const { root } = await commandContext();
    const done = untrustPlugins(root, { spec: this.spec });
    if (done.length === 0)
      this.context.stdout.write('.chalk/config names no plugins (CHALK_PLUGINS): nothing to untrust\n');
    for (const p of done) {
      this.context.stdout.write(
        p.removed ? `untrusted ${p.spec}  ${p.path}\n` : `${p.spec} (${p.path}) was not trusted on this machine\n`,
      );
    }
    return 0;
  }
}
