import type { Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import type { Decider } from '../ports/decider.js';
import { calibrationCheck } from './doctor.js';
import { selectDecider } from './select.js';
import { stuckTap } from './stuck-tap.js';

/**
 * The core's part of the Decider port: the rule that picks among the deciders plugins offer,
 * the loop's stuck question (an `onVerdict` tap; it asks nothing with CHALK_DECIDER=off), and
 * the doctor's calibration line.
 */
export const deciderSelection: Plugin = {
  name: 'core-decider',
  register(kernel) {
    kernel.select('Decider', (config, offered) => selectDecider(config, offered), {
      setting: 'CHALK_DECIDER_PROVIDER',
    });
    // One decider per kernel: its runtime (admission, sinks) is keyed by the instance.
    let decider: Decider | null | undefined;
    const tap = stuckTap({
      config: kernel.config,
      decider: () => {
        decider ??= kernel.has(Tokens.Decider) ? kernel.resolve(Tokens.Decider) : null;
        return decider;
      },
      store: () => kernel.resolve(Tokens.Store),
      log: kernel.log,
      env: process.env,
    });
    kernel.hooks.onVerdict.tapPromise('core-decider', tap);
    kernel.checks.push(calibrationCheck(kernel));
  },
};
