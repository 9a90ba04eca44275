import { Command, Option } from 'clipanion';
import { depsFromKernel } from '../core/run/base/deps.js';
import { officeHours } from '../core/run/office-hours/office-hours.js';
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
    const fresh: Array<{ close(): Promise<void> }> = [];
    return underRunEdge(deps.store, async (edge) => {
      try {
        const r = await officeHours(deps, {
          root: base.root,
          note: this.message,
          detach: this.detach,
          signal: edge.signal,
          onInterrupt: edge.onInterrupt,
          atExit: edge.atExit,
          // Once the grading files are back, the run reads its configuration and plugins afresh.
          reboot: async () => {
            const next = depsFromKernel((await kernelContext(await commandContext())).kernel);
            fresh.push(next.store);
            return next;
          },
        });
        return r.exitCode;
      } finally {
        for (const s of fresh) await s.close().catch(() => undefined);
      }
    });
  }
}
