import { Command, Option } from 'clipanion';
import { noSuchLesson, parseLessonId } from '../core/memory/curate.js';
import { PgStore } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class LessonsForgetCommand extends Command {
  static override paths = [['lessons', 'forget']];
  static override usage = Command.Usage({
    description: 'never recall a lesson again (it stays in the database; chalk lessons --all shows it)',
  });
  id = Option.String();

  async execute(): Promise<number> {
    const id = parseLessonId(this.id);
    const { config } = await commandContext();
    const store = await PgStore.forConfig(config);
    try {
      if (!(await store.lessons.forget(id))) throw noSuchLesson(id);
      this.context.stdout.write(`lesson ${id} forgotten: no loop will be given it again\n`);
      return 0;
    } finally {
      await store.close();
    }
  }
}
