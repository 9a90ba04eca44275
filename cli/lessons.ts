import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { lessonRows } from '../core/memory/curate.js';
import { repoName } from '../core/repo/git.js';
import { PgStore } from '../core/store/index.js';
import { commandContext, table } from './context.js';

export default class LessonsCommand extends Command {
  static override paths = [['lessons']];
  static override usage = Command.Usage({
    description:
      "lessons this repository's loops can be given (its own and general ones): scope, times recalled, times the loop then passed",
  });
  json = Option.Boolean('--json', false);
  all = Option.Boolean('--all', false, {
    description: 'every lesson of every repository, open and forgotten ones too',
  });

  async execute(): Promise<number> {
    const { root, config } = await commandContext();
    if (!root && !this.all)
      throw new UserError('chalk lessons runs inside a git repository: cd into one, or use --all');
    const repo = this.all || !root ? null : await repoName(root);
    const store = await PgStore.forConfig(config);
    try {
      const lessons = await store.lessons.list({ repo });
      if (this.json) {
        this.context.stdout.write(`${JSON.stringify({ repo, lessons }, null, 2)}\n`);
      } else if (lessons.length === 0) {
        this.context.stdout.write(
          this.all ? 'no lessons yet\n' : 'no lessons for this repository yet (chalk lessons --all lists every one)\n',
        );
      } else {
        this.context.stdout.write(table(lessonRows(lessons)));
      }
      return 0;
    } finally {
      await store.close();
    }
  }
}
