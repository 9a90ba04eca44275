import { Command } from 'clipanion';
import { UserError } from '../core/errors.js';
import { depsFromKernel } from '../core/run/base/deps.js';
import { checkTicket } from '../core/run/commands/check.js';
import { SPEC_BLOCKED_EXIT } from '../core/run/loop/run-ticket.js';
import { kernelContext } from './context.js';

export default class CheckCommand extends Command {
  static override paths = [['check']];
  static override usage = Command.Usage({
    description: "ask the cheap model whether this worktree's spec is ready for an agent (the spec check alone)",
  });

  async execute(): Promise<number> {
    const { kernel, root } = await kernelContext();
    const deps = depsFromKernel(kernel);
    try {
      const { ctx, outcome } = await checkTicket(deps, {
        root,
        atExit: (release) => {
          process.once('exit', release);
          return () => process.off('exit', release);
        },
      });
      if (outcome === 'fail') throw new UserError(`${ctx.spec} is not ready for an agent`, SPEC_BLOCKED_EXIT);
      return 0;
    } finally {
      await deps.store.close().catch(() => undefined);
    }
  }
}
