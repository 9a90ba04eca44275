import { Command } from 'clipanion';
import { UserError } from '../core/errors.js';
import { selectForge } from '../core/forge/select.js';
import { initRepository } from '../core/setup/init.js';
import { commandContext, withNamedPlugins } from './context.js';

export default class InitCommand extends Command {
  static override paths = [['init']];
  static override usage = Command.Usage({ description: "add Chalk's files to this repository (never overwrites)" });

  async execute(): Promise<number> {
    const { root, config } = await withNamedPlugins(await commandContext());
    if (!root) throw new UserError('not inside a git repository; run chalk init at the root of one');
    const forge = await selectForge(config);
    for (const l of initRepository(root, forge === 'github' || forge === 'gitlab' ? forge : 'none', config.table)) {
      this.context.stdout.write(`  ${l.action.padEnd(8)} ${l.note ?? l.path}\n`);
    }
    if (config.str('CHALK_IMAGE') !== 'chalk-sandbox:local') {
      this.context.stdout.write(
        `  action   set CHALK_CI_IMAGE for CI to an image with the same toolchain as ${config.str('CHALK_IMAGE')} and bash\n`,
      );
    }
    this.context.stdout.write(
      "next: set CHALK_TEST_CMD in .chalk/config, review .chalk/textbook.md, commit, then 'chalk doctor'\n",
    );
    return 0;
  }
}
