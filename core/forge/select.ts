import type { Config } from '../config/config.js';
import { UserError } from '../errors.js';
import type { Forge } from '../ports/forge.js';
import { originUrl } from '../repo/git.js';

export interface OfferedForge {
  name: string;
  value: Forge;
}

/**
 * `auto` for an origin URL: the forge that claims it (`match`), else the one that may be it
 * (`fallback`, GitLab for any host), else `none`. Each forge says so itself (Forge.matchOrigin);
 * two of the best kind are one clear refusal, never a silent pick.
 */
export function forgeForOrigin(url: string, forges: readonly OfferedForge[]): string {
  const said = forges.map((f) => ({ name: f.name, match: f.value.matchOrigin?.(url) ?? 'no' }));
  for (const kind of ['match', 'fallback'] as const) {
    const named = said.filter((s) => s.match === kind).map((s) => s.name);
    if (named.length === 1) return named[0] as string;
    if (named.length > 1) {
      throw new UserError(
        `CHALK_FORGE=auto: the origin ${url} could be ${named.join(' or ')}; set CHALK_FORGE to the one you use`,
      );
    }
  }
  return 'none';
}

/**
 * The CHALK_FORGE rule: an explicit name wins; `auto` reads the origin remote and asks the
 * offered forges. With no origin there is nowhere to push or open a request, so `auto` means `none`.
 */
export async function selectForge(config: Config, forges: () => readonly OfferedForge[]): Promise<string> {
  const chosen = config.str('CHALK_FORGE');
  if (chosen !== 'auto') return chosen;
  const origin = config.root ? await originUrl(config.root) : null;
  return origin ? forgeForOrigin(origin, forges()) : 'none';
}

/** The paths the guard keeps from the agent for every offered forge (a repository may change forges). */
export function forgeGuardedPaths(forges: readonly OfferedForge[]): string[] {
  return [...new Set(forges.flatMap((f) => [...(f.value.guardedPaths ?? [])]))];
}
