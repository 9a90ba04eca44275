import type { Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import { parallelism } from './fleet.js';

/** The core's fleet part of `chalk doctor`: CHALK_MAX_PARALLEL's value and how it was found. */
export const fleetPlugin: Plugin = {
  name: 'core-fleet',
  register(kernel) {
    kernel.checks.push({
      id: 'fleet-parallel',
      run: async () => {
        const p = await parallelism(kernel.config, () => kernel.resolve(Tokens.Sandbox));
        return {
          status: 'ok',
          label: `fleet: ${p.value} workstream${p.value === 1 ? '' : 's'} at once`,
          detail: p.how,
        };
      },
    });
  },
};
