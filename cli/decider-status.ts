import { Command, Option } from 'clipanion';
import { calibrationLines, deciderStatus } from '../core/decision/status.js';
import { DECIDER_STATUS } from '../core/decision/status-part.js';
import { untrustedReason } from '../core/decision/trust.js';
import { Tokens } from '../core/kernel/tokens.js';
import { describeLimit } from '../core/protocol/entry.js';
import { kernelContext } from './context.js';

export default class DeciderStatusCommand extends Command {
  static override paths = [['decider', 'status']];
  static override usage = Command.Usage({
    description: "the decider's mode, provider, trust, health and calibration, per the decider protocol",
  });
  json = Option.Boolean('--json', false, { description: 'one JSON document' });

  async execute(): Promise<number> {
    const { kernel, config } = await kernelContext();
    const out = (l: string) => this.context.stdout.write(`${l}\n`);
    const decider = kernel.has(Tokens.Decider) ? kernel.resolve(Tokens.Decider) : null;
    // The store is opened only to read the calibration (not with CHALK_DECIDER=off).
    const store = kernel.resolve(Tokens.Store);
    const s = await deciderStatus({
      config,
      provider: kernel.selected.get('Decider') ?? kernel.boundByPlugin(Tokens.Decider) ?? null,
      decider,
      store,
      parts: kernel.contributions(DECIDER_STATUS),
    }).finally(() => store.close().catch(() => undefined));
    const healthy = s.health?.healthy === true;
    if (this.json) {
      out(JSON.stringify(s, null, 2));
      return healthy ? 0 : 1;
    }
    out(`mode      CHALK_DECIDER=${s.mode}, threshold ${s.threshold}`);
    out(
      `decider   ${s.url} (provider ${s.provider ?? 'none'}${decider ? `, ${describeLimit(decider.entry.limit)}, context ${decider.entry.maxContextTokens} tokens` : ''})`,
    );
    out(`trust     ${s.trust === 'local' ? 'on this machine' : s.trust}`);
    if (!decider) {
      out('health    not checked: no plugin provides a decider');
    } else if (s.trust === 'untrusted' || !s.health) {
      out(`health    not checked: ${decider.unavailable() ?? 'nothing may be sent to it'}`);
      for (const line of s.receives ?? []) out(`  ${line}`);
    } else {
      const h = s.health;
      const via = h.via === 'probe' ? ' (no /health: one probe question)' : '';
      out(
        `health    ${h.healthy ? 'ok' : h.status}${h.model ? `, model ${h.model}` : ''}${h.revision ? `, revision ${h.revision}` : ''}${via}${h.detail ? `: ${h.detail}` : ''}`,
      );
    }
    const lines = calibrationLines(s);
    out(`calibration ${lines[0]}`);
    for (const l of lines.slice(1)) out(`            ${l}`);
    const embed = config.str('CHALK_EMBED_URL');
    const embedRefused = untrustedReason(embed, 'CHALK_EMBED_URL');
    out(`embedder  ${embedRefused ?? `${embed} (may be asked)`}`);
    for (const l of s.partLines) out(l);
    return healthy ? 0 : 1;
  }
}
