import { Command, Option } from 'clipanion';
import { runDemo } from '../core/demo/demo.js';

export default class DemoCommand extends Command {
  static override paths = [['demo']];
  static override usage = Command.Usage({
    description:
      'make a small example repository and run the whole loop on it in a real sandbox, to a pushed branch and a summary',
  });
  dir = Option.String('--dir', {
    description: 'where to make the example (empty or new); default a temporary directory',
  });

  async execute(): Promise<number> {
    const r = await runDemo({ dir: this.dir, out: (line) => this.context.stdout.write(`${line}\n`) });
    return r.exitCode;
  }
}
