import { Command, Option } from 'clipanion';
import { newTicket } from '../core/setup/new-ticket.js';
import { commandContext } from './context.js';

export default class NewCommand extends Command {
  static override paths = [['new']];
  static override usage = Command.Usage({
    description: 'start a ticket: a worktree on chalk/TICKET with a spec to fill in',
  });
  ticket = Option.String({ required: true });
  title = Option.Rest();

  async execute(): Promise<number> {
    const { config } = await commandContext();
    const t = await newTicket({
      cwd: process.cwd(),
      ticket: this.ticket,
      title: this.title.join(' '),
      base: config.str('CHALK_BASE_BRANCH'),
    });
    this.context.stdout.write(`created ${t.worktree} on branch ${t.branch}\n`);
    this.context.stdout.write(`next: edit ${t.spec}, commit it, then run 'chalk run' from that directory\n`);
    return 0;
  }
}
