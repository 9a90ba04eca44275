import { resolve } from 'node:path';
import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { repoName } from '../core/repo/git.js';
import { defaultDashboardPath, openPage, parseDays, readCard, writePage } from '../core/report/dashboard.js';
import { PgStore } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class DashboardCommand extends Command {
  static override paths = [['dashboard']];
  static override usage = Command.Usage({
    description: 'write the report card: one self-contained HTML page of where the money went and what to tune',
  });
  days = Option.String('--days', { description: 'the window, in days (default 30)' });
  repo = Option.String('--repo', { description: 'one repository (default: this one, or all outside a repository)' });
  all = Option.Boolean('--all', false, { description: 'every repository' });
  output = Option.String('--output,-o', { description: 'where to write the page' });
  open = Option.Boolean('--open', true, { description: 'open it (--no-open: do not)' });

  async execute(): Promise<number> {
    const days = parseDays(this.days);
    if (this.all && this.repo !== undefined) throw new UserError('give --repo NAME or --all, not both');
    if (this.repo !== undefined && this.repo.trim() === '') throw new UserError('--repo takes a repository name');
    const { root, config } = await commandContext();
    const repo = this.all ? null : (this.repo ?? (root ? await repoName(root) : null));
    const store = await PgStore.forConfig(config);
    let path: string;
    try {
      const card = await readCard(
        store.pool,
        {
          days,
          repo,
          deciderThreshold: config.num('CHALK_DECIDER_THRESHOLD'),
          fpRules: config.str('CHALK_FP_RULES'),
          testReportSet: config.str('CHALK_TEST_REPORT') !== '',
        },
        { for: 'dashboard', parallel: store.kind === 'server' },
      );
      path = writePage(card, this.output ? resolve(this.output) : defaultDashboardPath());
    } finally {
      await store.close();
    }
    this.context.stdout.write(`report card for the last ${days} days: ${path}\n`);
    if (this.open) openPage(path);
    return 0;
  }
}
