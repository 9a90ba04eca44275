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
      'stop runs, remove sandboxes, worktrees and merged chalk/, tutoring/, detention/ branches (--all: also unmerged ones and all state); never the database',
  });
  all = Option.Boolean('--all', false);

  async execute(): Promise<number> {
    if ((await worktreeRoot()) === null) throw new UserError('chalk cleanup runs inside a git repository');
    const { kernel } = await kernelContext();
    await cleanupRepository({
      root: await mainRoot(),
      repo: await repoName(),
      all: this.all,
      sandbox: kernel.resolve(Tokens.Sandbox),
      say: (line) => this.context.stdout.write(`${line}\n`),
      warn: (line) => this.context.stderr.write(`warning: ${line}\n`),
    });
    return 0;
  }
}
