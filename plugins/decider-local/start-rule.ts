/**
 * When a run starts the local services in the background (pure; background.ts does the I/O).
 * Installed, not running and the decider not off are background.ts's `whyNotStart`; this rule
 * adds the machine and the moment:
 * - memory: the decider and the embedding model need room, so a run starts them only when the
 *   machine's free memory is at least MIN_FREE_MIB, unless CHALK_DECIDER=on (the user asked for it
 *   to act); otherwise the run warns once and goes on without them, at every moment;
 * - the moment: at the run's start only when the first loop can use them, i.e. rerank is possible
 *   (at least CHALK_DECIDER_MIN_LESSONS resolved lessons its loops can be given); otherwise the
 *   first loop that fails its rubric starts them (the stuck question comes after a failed loop),
 *   and a question that finds nothing listening still does.
 */

/** The least free memory (MiB, os.freemem) for a run to start the local services. */
export const MIN_FREE_MIB = 6_144;

export type StartMoment = 'run-start' | 'failed-rubric' | 'no-answer';

export interface StartFacts {
  /** CHALK_DECIDER (off is refused before the rule). */
  mode: string;
  moment: StartMoment;
  /** The machine's free memory now, MiB. */
  freeMiB: number;
  /** Resolved lessons this repository's loops can be given, or null when they could not be counted. Read at run start only. */
  resolvedLessons: number | null;
  /** CHALK_DECIDER_MIN_LESSONS. */
  minLessons: number;
}

export type StartRule =
  | { start: true }
  | {
      start: false;
      /** `memory`: the run goes on without them (a warning); `later`: a failing loop starts them (said once). */
      why: 'memory' | 'later';
      message: string;
    };

export function startRule(f: StartFacts): StartRule {
  if (f.mode !== 'on' && f.freeMiB < MIN_FREE_MIB) {
    return {
      start: false,
      why: 'memory',
      message: `not starting the local decider: ${Math.floor(f.freeMiB)} MiB of memory free, under the ${MIN_FREE_MIB} MiB it needs; going on without it (CHALK_DECIDER=on starts it anyway)`,
    };
  }
  if (f.moment === 'run-start' && (f.resolvedLessons === null || f.resolvedLessons < f.minLessons)) {
    const have =
      f.resolvedLessons === null
        ? 'they could not be counted'
        : `this repository's loops can be given ${f.resolvedLessons}`;
    return {
      start: false,
      why: 'later',
      message: `the local decider will start once a loop fails its rubric (rerank needs CHALK_DECIDER_MIN_LESSONS=${f.minLessons} resolved lessons; ${have})`,
    };
  }
  return { start: true };
}
