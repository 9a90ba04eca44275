import type { DoctorCheck } from '../kernel/doctor.js';
import type { PluginHost } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { calibrationLines, deciderStatus } from './status.js';

/**
 * `chalk doctor`'s calibration line: the mode, the provider, the URL and its
 * trust, and whether `on` may act yet (the decider plugin's own line checks
 * health). Optional, so never FAIL: an uncalibrated decider records as shadow.
 */
export function calibrationCheck(kernel: PluginHost): DoctorCheck {
  return {
    id: 'decider-calibration',
    async run() {
      const mode = kernel.config.str('CHALK_DECIDER');
      if (mode === 'off') return { status: '--', label: 'decider calibration', detail: 'off (CHALK_DECIDER=off)' };
      const s = await deciderStatus({
        config: kernel.config,
        provider: kernel.selected.get('Decider') ?? kernel.boundByPlugin(Tokens.Decider) ?? null,
        decider: null,
        store: kernel.resolve(Tokens.Store),
        health: false,
      });
      const head = `CHALK_DECIDER=${mode}, provider ${s.provider ?? 'none'}, ${s.url} (${s.trust})`;
      return {
        status: s.calibration.calibrated ? 'ok' : '--',
        label: 'decider calibration',
        detail: `${head}: ${calibrationLines(s).join('; ')}`,
      };
    },
  };
}
