import type { Plugin } from '../kernel/kernel.js';
import { calibrationCheck } from './doctor.js';
import { selectDecider } from './select.js';
import { sessionFor } from './session.js';
import { stuckTap } from './stuck-tap.js';

/**
 * The core's part of the Decider port: the rule that picks among the deciders plugins offer,
 * the loop's stuck question (an `onVerdict` tap; it asks nothing with CHALK_DECIDER=off), and
 * the doctor's calibration line.
 */
export const deciderSelection: Plugin = {
  name: 'core-decider',
  register(kernel) {
    kernel.select('Decider', (config, _offered, offers) => selectDecider(config, offers), {
      setting: 'CHALK_DECIDER_PROVIDER',
    });
    // One decider per kernel (its runtime, admission and sinks are keyed by the instance), shared
    // with the lesson ladder's rerank rung through the kernel's one session.
    kernel.hooks.onVerdict.tapPromise('core-decider', stuckTap(sessionFor(kernel), kernel.log));
    kernel.checks.push(calibrationCheck(kernel));
  },
};
