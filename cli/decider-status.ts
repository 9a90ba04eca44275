import { Command } from 'clipanion';
import { untrustedReason, whatItReceives } from '../core/decision/trust.js';
import { Tokens } from '../core/kernel/tokens.js';
import { describeLimit } from '../core/protocol/entry.js';
import { kernelContext } from './context.js';

export default class DeciderStatusCommand extends Command {
  static override paths = [['decider', 'status']];
  static override usage = Command.Usage({ description: "the decider's health, per the decider protocol" });

  async execute(): Promise<number> {
    const { kernel, config } = await kernelContext();
    const out = (l: string) => this.context.stdout.write(`${l}\n`);
    const decider = kernel.resolve(Tokens.Decider);
    out(
      `decider   ${decider.entry.url} (${decider.name}, ${describeLimit(decider.entry.limit)}, context ${decider.entry.maxContextTokens} tokens)`,
    );
    out(`mode      CHALK_DECIDER=${config.str('CHALK_DECIDER')}, threshold ${config.str('CHALK_DECIDER_THRESHOLD')}`);
    const h = await decider.health().finally(() => decider.close?.());
    if (h.status === 'untrusted') {
      out(`health    not checked: ${h.detail}`);
      for (const line of whatItReceives()) out(`  ${line}`);
    } else {
      const via = h.via === 'probe' ? ' (no /health: one probe question)' : '';
      out(
        `health    ${h.healthy ? 'ok' : h.status}${h.model ? `, model ${h.model}` : ''}${via}${h.detail ? `: ${h.detail}` : ''}`,
      );
    }
    const embed = config.str('CHALK_EMBED_URL');
    const embedRefused = untrustedReason(embed, 'CHALK_EMBED_URL');
    out(`embedder  ${embedRefused ?? `${embed} (may be asked)`}`);
    return h.healthy ? 0 : 1;
  }
}
