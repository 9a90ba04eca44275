import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { refuseLiveRun } from '../core/run/claim.js';
import { resolveContext } from '../core/run/context.js';
import { depsFromKernel } from '../core/run/deps.js';
import { detachRun } from '../core/run/detach.js';
import { runTicket, SPEC_BLOCKED_EXIT } from '../core/run/run-ticket.js';
import { commandContext, kernelContext } from './context.js';
import { underRunEdge } from './run-edge.js';

export default class RunCommand extends Command {
  static override paths = [['run']];
  static override usage = Command.Usage({
    description: "take this worktree's ticket from its spec to a reviewed request, or to detention",
  });
  detach = Option.Boolean('--detach,-d', false, { description: 'run in the background; follow with chalk logs' });

  async execute(): Promise<number> {
    const base = await commandContext();
    if (this.detach) {
      const ctx = await resolveContext({ root: base.root, config: base.config });
      refuseLiveRun(ctx.paths, ctx.ticket);
      // The background run boots a kernel: refuse an untrusted plugin here, not in its log.
      (await import('../core/kernel/boot.js')).checkPlugins({ config: base.config });
      const pid = detachRun(ctx);
      this.context.stdout.write(
        `[${ctx.ticket}] running in the background (pid ${pid}); follow with: chalk logs ${ctx.ticket} -f\n`,
      );
      return 0;
    }
    // Refuse before the kernel boots (and before anything starts).
    const ctx = await resolveContext({ root: base.root, config: base.config });
    refuseLiveRun(ctx.paths, ctx.ticket);
    const { kernel } = await kernelContext(base);
    const deps = depsFromKernel(kernel);
    return underRunEdge(deps.store, async (edge) => {
      const r = await runTicket(deps, {
        root: base.root,
        ctx,
        signal: edge.signal,
        onInterrupt: edge.onInterrupt,
        atExit: edge.atExit,
      });
      if (r.outcome.kind === 'spec-blocked') {
        throw new UserError(
          `rewrite the checkpoints in ${ctx.spec} and commit, or set CHALK_SPEC_CHECK=false to skip this check`,
          SPEC_BLOCKED_EXIT,
        );
      }
      return r.exitCode;
    });
  }
}
