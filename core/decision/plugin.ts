import type { Plugin } from '../kernel/kernel.js';
import { selectDecider } from './select.js';

/** The core's part of the Decider port: the rule that picks among the deciders plugins offer. */
export const deciderSelection: Plugin = {
  name: 'core-decider',
  register(kernel) {
    kernel.select('Decider', (config, offered) => selectDecider(config, offered), {
      setting: 'CHALK_DECIDER_PROVIDER',
    });
  },
};
