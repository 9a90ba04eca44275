import { z } from 'zod';
import { type KeySpec, machineKey as machine, parseLimit, positiveInt, text } from '../../core/keys.js';

/**
 * The hosted decider's keys. CHALK_DECIDER_URL stays in core's table: core's selection
 * rule reads it (a loopback URL picks a local decider when one is offered).
 */
export const DECIDER_HTTP_KEYS: readonly KeySpec[] = [
  machine('CHALK_DECIDER_TOKEN', '', 'Bearer token for the decider', text, { secret: true }),
  machine(
    'CHALK_DECIDER_LIMIT',
    'max_concurrent=4',
    'Decider admission: max_concurrent=N (calls in flight) or tpm=N[,burst=N] (a token bucket per minute)',
    () =>
      z.string().superRefine((v, ctx) => {
        try {
          parseLimit(v, 'CHALK_DECIDER_LIMIT');
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
        }
      }),
  ),
  machine(
    'CHALK_DECIDER_CONTEXT_TOKENS',
    '4096',
    "The decider's context window in tokens; a request counted above it is not sent",
    () => positiveInt('CHALK_DECIDER_CONTEXT_TOKENS'),
  ),
];
