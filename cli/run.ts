import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { Tokens } from '../core/kernel/tokens.js';
import { refuseLiveRun } from '../core/run/base/claim.js';
import { resolveContext } from '../core/run/base/context.js';
import { depsFromKernel } from '../core/run/base/deps.js';
import { runTicket, SPEC_BLOCKED_EXIT } from '../core/run/loop/run-ticket.js';
import { detachRun } from '../core/run/resume/detach.js';
import { commandContext, kernelContext } from './context.js';
import { underRunEdge } from './run-edge.js';

export default class RunCommand extends Command {
  static override paths = [['run']];
  static override usage = Command.Usage({
    description: "take this worktree's ticket from its spec to a reviewed request, or to detention",
  });
  detach = Option.Boolean('--detach,-d', false, { description: 'run in the background; follow with chalk logs' });

  async execute(): Promise<number> {
    // The kernel first (its plugin trust check refuses before anything is imported): the
    // refusals need the Agent port, which says whether it can run. Nothing starts yet.
    const base = await kernelContext(await commandContext());
    const { kernel } = base;
    const agent = kernel.resolve(Tokens.Agent);
    const ctx = await resolveContext({ root: base.root, config: base.config, agent });
    refuseLiveRun(ctx.paths, ctx.ticket);
    if (this.detach) {
      const pid = detachRun(ctx);
      this.context.stdout.write(
        `[${ctx.ticket}] running in the background (pid ${pid}); follow with: chalk logs ${ctx.ticket} -f\n`,
      );
      return 0;
    }
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
