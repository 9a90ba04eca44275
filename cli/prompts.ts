import { Command, Option } from 'clipanion';
import { UserError } from '../core/errors.js';
import { ejectPrompt, listPrompts } from '../core/setup/prompts.js';
import { commandContext } from './context.js';

async function repoRoot(): Promise<string> {
  const { root } = await commandContext();
  if (!root) throw new UserError('not inside a git repository; run chalk prompts inside one');
  return root;
}

export class PromptsListCommand extends Command {
  static override paths = [['prompts'], ['prompts', 'list']];
  static override usage = Command.Usage({ description: 'list the prompts and which ones this repository overrides' });
  json = Option.Boolean('--json', false);

  async execute(): Promise<number> {
    const prompts = listPrompts(await repoRoot());
    if (this.json) {
      this.context.stdout.write(`${JSON.stringify(prompts, null, 2)}\n`);
      return 0;
    }
    for (const p of prompts) {
      this.context.stdout.write(`${p.name.padEnd(12)} ${p.overridden ? `overridden  ${p.path}` : 'default'}\n`);
    }
    return 0;
  }
}

export class PromptsEjectCommand extends Command {
  static override paths = [['prompts', 'eject']];
  static override usage = Command.Usage({ description: 'copy a shipped prompt into .chalk/prompts/ to override it' });
  name = Option.String({ required: true });

  async execute(): Promise<number> {
    const rel = ejectPrompt(await repoRoot(), this.name);
    this.context.stdout.write(`created ${rel}; edit and commit it to change this prompt for the repository\n`);
    return 0;
  }
}
