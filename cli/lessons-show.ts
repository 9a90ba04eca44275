import { Command, Option } from 'clipanion';
import { lessonDetail, noSuchLesson, parseLessonId } from '../core/memory/curate.js';
import { PgStore } from '../core/store/index.js';
import { commandContext } from './context.js';

export default class LessonsShowCommand extends Command {
  static override paths = [['lessons', 'show']];
  static override usage = Command.Usage({
    description: 'one lesson in full: its failure, note, lesson, scope and recalls',
  });
  id = Option.String();
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const id = parseLessonId(this.id);
    const { config } = await commandContext();
    const store = await PgStore.forConfig(config);
    try {
      const lesson = await store.lessons.get(id);
      if (!lesson) throw noSuchLesson(id);
      this.context.stdout.write(this.json ? `${JSON.stringify(lesson, null, 2)}\n` : lessonDetail(lesson));
      return 0;
    } finally {
      await store.close();
    }
  }
}
