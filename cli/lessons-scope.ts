import { Command, Option } from 'clipanion';
import { noSuchLesson, parseLessonId, parseScope } from '../core/memory/curate.js';
import { PgStore } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class LessonsScopeCommand extends Command {
  static override paths = [['lessons', 'scope']];
  static override usage = Command.Usage({
    description: 'where a lesson is recalled: general (every repository), repo or none (its own repository only)',
  });
  id = Option.String();
  scope = Option.String();

  async execute(): Promise<number> {
    const id = parseLessonId(this.id);
    const scope = parseScope(this.scope);
    const { config } = await commandContext();
    const store = await PgStore.forConfig(config);
    try {
      if (!(await store.lessons.setScope(id, scope))) throw noSuchLesson(id);
      this.context.stdout.write(`lesson ${id} is now scoped ${scope}\n`);
      return 0;
    } finally {
      await store.close();
    }
  }
}
