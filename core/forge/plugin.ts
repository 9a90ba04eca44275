import type { Plugin } from '../kernel/kernel.js';
import { NoForge } from './none.js';
import { selectForge } from './select.js';

/** The core's part of the Forge port: the `none` forge and the CHALK_FORGE rule. */
export const forgeSelection: Plugin = {
  name: 'core-forge',
  register(kernel) {
    kernel.offer('Forge', 'none', { useFactory: () => new NoForge() });
    // CHALK_FORGE names any forge a plugin offered; a name nothing offered fails when the kernel settles.
    kernel.select('Forge', (config) => selectForge(config, () => kernel.offeredInstances('Forge')), {
      setting: 'CHALK_FORGE',
    });
  },
};
