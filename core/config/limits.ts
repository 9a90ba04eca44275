import type { Config } from './config.js';

/**
 * What the run's first lines say of a setting: its value and who chose it,
 * the environment, the repository, the default, or the repository held to
 * this machine's ceiling.
 */

const WHO = { env: 'environment', file: 'repository', default: 'default' } as const;

/** Who chose a key's value: `default`, `environment`, `repository`, or what the repository asked and the ceiling it was held to. */
export function chosenBy(config: Config, key: string): string {
  const e = config.entry(key);
  const limit = config.spec(key)?.limit;
  if (e.heldFrom !== undefined && limit) {
    const ceiling = config.entry(limit.ceiling);
    return `the repository asked ${limit.show(e.heldFrom)}, held to ${limit.ceiling} (${WHO[ceiling.source]})`;
  }
  return WHO[e.source];
}

/** `memory 2048 MiB (default)`: a limit as the run's first lines show it; `shown` replaces the value (a resolved `auto`). */
export function describeSetting(config: Config, key: string, shown?: string): string {
  const limit = config.spec(key)?.limit;
  const raw = config.str(key);
  if (!limit) return `${key} ${raw} (${chosenBy(config, key)})`;
  return `${limit.label} ${shown ?? limit.show(raw)} (${chosenBy(config, key)})`;
}

/** A machine key the repository's `.chalk/config` names, which is never used: said once, at the start. */
export function proposedLine(config: Config, key: string): string | null {
  const asked = config.proposed(key);
  return asked === null
    ? null
    : `the repository's .chalk/config asks for ${key}=${asked}, which only this machine's environment sets: not used`;
}

/** How a command or call stopped at its timeout is said: `timed out after 60 s (CHALK_RUBRIC_TIMEOUT)`. */
export const timedOutNote = (key: string, seconds: number) => `timed out after ${seconds} s (${key})`;
