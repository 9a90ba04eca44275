import { Command, Option } from 'clipanion';
import { depsFromKernel } from '../core/run/deps.js';
import { officeHours } from '../core/run/office-hours.js';
import { commandContext, kernelContext } from './context.js';
import { underRunEdge } from './run-edge.js';

export default class OfficeHoursCommand extends Command {
  static override paths = [['office-hours']];
  static override usage = Command.Usage({
    description:
      'on a detention branch, after committing your fix: record what was wrong as a lesson and continue the ticket on a tutoring/ branch',
  });
  message = Option.String('-m,--message', { description: 'what was wrong and how you fixed it' });
  detach = Option.Boolean('--detach,-d', false, { description: 'resume the run in the background' });

  async execute(): Promise<number> {
    const base = await commandContext();
    const { kernel } = await kernelContext(base);
    const deps = depsFromKernel(kernel);
    return underRunEdge(deps.store, async (edge) => {
      const r = await officeHours(deps, {
        root: base.root,
        note: this.message,
        detach: this.detach,
        signal: edge.signal,
        onInterrupt: edge.onInterrupt,
        atExit: edge.atExit,
      });
      return r.exitCode;
    });
  }
}
