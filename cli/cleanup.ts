import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { Tokens } from '../core/kernel/tokens.js';
import { mainRoot, repoName, worktreeRoot } from '../core/repo/git.js';
import { cleanupRepository } from '../core/setup/cleanup.js';
import { kernelContext } from './context.js';

export default class CleanupCommand extends Command {
  static override paths = [['cleanup']];
  static override usage = Command.Usage({
    description:
      'stop runs, remove sandboxes, worktrees, merged chalk/ and detention/ branches, merged or pushed tutoring/ ones and stale saved setup states (--all: every one, and all state); never the database',
  });
  all = Option.Boolean('--all', false);

  async execute(): Promise<number> {
    if ((await worktreeRoot()) === null) throw new UserError('chalk cleanup runs inside a git repository');
    const { kernel, config } = await kernelContext();
    await cleanupRepository({
      root: await mainRoot(),
      repo: await repoName(),
      all: this.all,
      baseBranch: config.str('CHALK_BASE_BRANCH'),
      config,
      sandbox: kernel.resolve(Tokens.Sandbox),
      say: (line) => this.context.stdout.write(`${line}\n`),
      warn: (line) => this.context.stderr.write(`warning: ${line}\n`),
    });
    return 0;
  }
}
