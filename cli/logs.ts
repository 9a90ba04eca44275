import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { runPaths } from '../core/layout.js';
import { repoName, TICKET_RE } from '../core/repo/git.js';
import { showLog } from '../core/run/commands/logs.js';
import { commandContext } from './context.js';

export default class LogsCommand extends Command {
  static override paths = [['logs']];
  static override usage = Command.Usage({ description: "show (or follow with -f) a background run's log" });
  ticket = Option.String({ required: true });
  follow = Option.Boolean('-f,--follow', false, { description: 'keep printing until the run ends' });

  async execute(): Promise<number> {
    if (!TICKET_RE.test(this.ticket)) throw new UserError(`'${this.ticket}' is not a ticket key (e.g. PROJ-123)`);
    const { root } = await commandContext();
    if (!root) throw new UserError('chalk logs runs inside a git repository: cd into one');
    const paths = runPaths(await repoName(root), this.ticket);
    const stop = new AbortController();
    const onInt = () => stop.abort();
    process.once('SIGINT', onInt);
    try {
      await showLog(paths, this.ticket, {
        follow: this.follow,
        write: (s) => this.context.stdout.write(s),
        signal: stop.signal,
      });
    } finally {
      process.off('SIGINT', onInt);
    }
    return 0;
  }
}
