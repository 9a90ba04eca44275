import { Command } from 'clipanion';
import { depsFromKernel } from '../core/run/base/deps.js';
import { submitTicket } from '../core/run/endings/submit.js';
import { commandContext, kernelContext } from './context.js';

export default class SubmitCommand extends Command {
  static override paths = [['submit']];
  static override usage = Command.Usage({
    description: 'every checkpoint ticked: push the ticket branch and open the request, whatever CHALK_AUTO_MR says',
  });

  async execute(): Promise<number> {
    const base = await commandContext();
    const { kernel } = await kernelContext(base);
    const deps = depsFromKernel(kernel);
    try {
      await submitTicket(deps, { root: base.root });
      return 0;
    } finally {
      await deps.store.close().catch(() => undefined);
    }
  }
}
