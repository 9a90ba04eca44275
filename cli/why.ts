import { Command, Option } from 'clipanion';
import { runWhy } from '../core/decision/why/run-why.js';
import { UserError } from '../core/errors.js';
import { Tokens } from '../core/kernel/tokens.js';
import { currentBranch, repoName, TICKET_RE, ticketFromBranch } from '../core/repo/git.js';
import { kernelContext } from './context.js';

export default class WhyCommand extends Command {
  static override paths = [['why']];
  static override usage = Command.Usage({
    description: 'explain why a run stopped in detention, with the decider and no Claude call',
  });
  ticket = Option.String({ required: false });

  async execute(): Promise<number> {
    const { root, kernel, log } = await kernelContext();
    if (!root) throw new UserError('chalk why runs inside a git repository: cd into one');
    let ticket = this.ticket;
    if (ticket === undefined) {
      const branch = await currentBranch(root);
      ticket = branch ? (ticketFromBranch(branch) ?? undefined) : undefined;
      if (!ticket) throw new UserError('name the ticket: chalk why TICKET (the current branch names none)');
    }
    if (!TICKET_RE.test(ticket)) throw new UserError(`'${ticket}' is not a ticket key (e.g. PROJ-123)`);
    const decider = kernel.resolve(Tokens.Decider);
    try {
      return await runWhy({
        repo: await repoName(root),
        root,
        ticket,
        decider,
        mode: kernel.config.str('CHALK_DECIDER'),
        out: (l) => this.context.stdout.write(`${l}\n`),
        warn: (l) => log.warn(l),
      });
    } finally {
      await decider.close?.();
    }
  }
}
