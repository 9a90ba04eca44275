import type { Fingerprint } from '../../fingerprint/fingerprint.js';
import type { LoopFailure } from '../../memory/key.js';

/** What a loop without progress leaves for the next loop's recall key (core/memory/key.ts). */
export function loopFailure(fingerprint: Fingerprint | null, feedback: string): LoopFailure {
  return {
    fingerprint: fingerprint?.hash ?? null,
    firstError: fingerprint && fingerprint.firstError !== '' ? fingerprint.firstError : null,
    failingTests: fingerprint?.tests ?? null,
    feedback,
  };
}
