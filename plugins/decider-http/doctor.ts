import { untrustedReason } from '../../core/decider.js';
import type { CheckResult, Config, Decider, DoctorCheck } from '../../core/plugin.js';

/**
 * `chalk doctor`'s decider lines. The decider is optional: off, or down, is `--`;
 * an untrusted address or a protocol other than 1 is FAIL, because the
 * configuration asks for something Chalk will not do.
 */
export function deciderChecks(config: Config, decider: () => Decider): DoctorCheck[] {
  return [
    {
      id: 'decider',
      async run(): Promise<CheckResult> {
        const mode = config.str('CHALK_DECIDER');
        if (mode === 'off') return { status: '--', label: 'decider', detail: 'off (CHALK_DECIDER=off)' };
        const d = decider();
        try {
          const h = await d.health();
          if (h.healthy) {
            return {
              status: 'ok',
              label: 'decider',
              detail: `${d.entry.url}${h.model ? `, model ${h.model}` : ''}${h.revision ? `, revision ${h.revision}` : ''} (${mode})`,
            };
          }
          if (h.status === 'untrusted' || h.status === 'version')
            return { status: 'FAIL', label: 'decider', detail: h.detail ?? h.status };
          return {
            status: '--',
            label: 'decider',
            detail: `${d.entry.url} is not answering (${h.status}); runs go on without it`,
          };
        } finally {
          await d.close?.();
        }
      },
    },
    {
      id: 'embedder-trust',
      async run(): Promise<CheckResult> {
        const refused = untrustedReason(config.str('CHALK_EMBED_URL'), 'CHALK_EMBED_URL');
        return refused
          ? { status: 'FAIL', label: 'embedding service trust', detail: refused }
          : { status: 'ok', label: 'embedding service trust', detail: `${config.str('CHALK_EMBED_URL')} may be asked` };
      },
    },
  ];
}
