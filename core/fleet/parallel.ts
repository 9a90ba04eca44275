/**
 * How many workstreams a fleet runs at once (`CHALK_MAX_PARALLEL`). Pure: the engine's
 * capacity is asked through the Sandbox port by the caller.
 *
 * `auto` is the smallest of 8, half the engine's CPUs and (its memory minus 1 GiB) over
 * one sandbox's memory (`CHALK_SANDBOX_MEM_MB`), at least 1; 4 when the engine cannot be asked.
 */

/** What the engine reports, and what one sandbox is given. */
export interface EngineCapacity {
  cpus: number;
  memoryMb: number;
  /** Memory of one sandbox (CHALK_SANDBOX_MEM_MB). */
  sandboxMemoryMb: number;
}

export const AUTO_CEILING = 8;
export const UNKNOWN_ENGINE = 4;
/** Memory left to the engine itself and everything else on it. */
export const RESERVED_MB = 1024;

export interface Parallelism {
  value: number;
  /** How it was found, for `chalk doctor` and the fleet's status. */
  how: string;
}

/**
 * A repository's number held to this machine's ceiling (CHALK_CEILING_MAX_PARALLEL):
 * `auto`, what auto gives on this engine, or a number.
 */
export function heldParallel(setting: string, ceiling: string, engine: EngineCapacity | null): Parallelism {
  const asked = maxParallel(setting, engine);
  const most = maxParallel(ceiling, engine);
  if (asked.value <= most.value) return asked;
  return {
    value: most.value,
    how: `the repository asked CHALK_MAX_PARALLEL=${setting}, held to CHALK_CEILING_MAX_PARALLEL=${ceiling} (${most.how})`,
  };
}

export function maxParallel(setting: string, engine: EngineCapacity | null): Parallelism {
  if (setting !== 'auto') return { value: Number(setting), how: `CHALK_MAX_PARALLEL=${setting}` };
  if (!engine) return { value: UNKNOWN_ENGINE, how: `auto: the engine could not be asked, so ${UNKNOWN_ENGINE}` };
  const byCpu = Math.floor(engine.cpus / 2);
  const byMem = Math.floor((engine.memoryMb - RESERVED_MB) / engine.sandboxMemoryMb);
  const value = Math.max(1, Math.min(AUTO_CEILING, byCpu, byMem));
  return {
    value,
    how: `auto: min(${AUTO_CEILING}, ${engine.cpus} CPUs / 2 = ${byCpu}, (${engine.memoryMb} MiB - ${RESERVED_MB}) / ${engine.sandboxMemoryMb} MiB = ${byMem})${value === 1 && Math.min(byCpu, byMem) < 1 ? ', at least 1' : ''}`,
  };
}
