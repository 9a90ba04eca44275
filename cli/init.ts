import { Command } from 'clipanion';
import { UserError } from '../core/errors.js';
import { Tokens } from '../core/kernel/tokens.js';
import { findRepoFacts, foundKeys, initRepository } from '../core/setup/init.js';
import { commandContext, kernelContext } from './context.js';

export default class InitCommand extends Command {
  static override paths = [['init']];
  static override usage = Command.Usage({
    description:
      "add Chalk's files to this repository, with the test and setup commands, toolchain and base branch it finds (never overwrites)",
  });

  async execute(): Promise<number> {
    // The kernel: the chosen forge (CHALK_FORGE, or `auto` asking each offered one) says its gate files.
    const { root, config, kernel } = await kernelContext(await commandContext());
    if (!root) throw new UserError('not inside a git repository; run chalk init at the root of one');
    const forge = kernel.resolve(Tokens.Forge);
    const found = await findRepoFacts(root);
    const gate = { name: forge.name, files: forge.gateFiles?.() ?? [] };
    const lines = initRepository(root, gate, config.table, found);
    for (const l of lines) this.context.stdout.write(`  ${l.action.padEnd(8)} ${l.note ?? l.path}\n`);
    if (lines.some((l) => l.action === 'kept' && l.path === '.chalk/config')) {
      // The file is the person's: say where it differs from what was found, never change it.
      for (const [key, f] of Object.entries(foundKeys(found))) {
        if (config.str(key) === f.value) continue;
        this.context.stdout.write(
          `  action   .chalk/config kept: it has ${key}=${config.str(key)}; init found ${f.value} (${f.from})\n`,
        );
      }
    }
    if (config.str('CHALK_IMAGE') !== 'chalk-sandbox:local') {
      this.context.stdout.write(
        `  action   set CHALK_CI_IMAGE for CI to an image with the same toolchain as ${config.str('CHALK_IMAGE')} and bash\n`,
      );
    }
    const next = found.stack.test
      ? 'review .chalk/config and .chalk/textbook.md'
      : 'set CHALK_TEST_CMD in .chalk/config, review .chalk/textbook.md';
    this.context.stdout.write(`next: ${next}, commit, then 'chalk doctor'\n`);
    return 0;
  }
}
