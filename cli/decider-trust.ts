import { Command, Option } from 'clipanion';
import { isLocalUrl, trust, trustKey, whatItReceives } from '../core/decision/trust.js';

export default class DeciderTrustCommand extends Command {
  static override paths = [['decider', 'trust']];
  static override usage = Command.Usage({
    description: 'acknowledge a decider or embedding service on another machine, after showing what it would receive',
  });
  url = Option.String({ required: true });

  async execute(): Promise<number> {
    const out = (l: string) => this.context.stdout.write(`${l}\n`);
    const shown = trustKey(this.url); // refuses what is not an http(s) URL before printing anything
    if (isLocalUrl(this.url)) {
      out(`${shown} is on this machine: it needs no trust.`);
      return 0;
    }
    for (const line of whatItReceives()) out(line);
    const added = trust(this.url);
    out(added ? `trusted ${shown} on this machine` : `${shown} was already trusted on this machine`);
    return 0;
  }
}
