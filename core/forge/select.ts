import type { Config } from '../config/config.js';
import { originUrl } from '../repo/git.js';

const GITHUB_ORIGIN = /^(https?:\/\/|ssh:\/\/)?([^@/]+@)?github\.com[:/]/;

/** `auto`: GitHub for a github.com origin, GitLab for anything else (self-hosted included). */
export function forgeForOrigin(url: string | null): 'github' | 'gitlab' {
  return url && GITHUB_ORIGIN.test(url) ? 'github' : 'gitlab';
}

/**
 * The CHALK_FORGE rule: an explicit name wins; `auto` reads the origin remote.
 * With no origin there is nowhere to push or open a request, so `auto` means `none`.
 */
export async function selectForge(config: Config): Promise<string> {
  const chosen = config.str('CHALK_FORGE');
  if (chosen !== 'auto') return chosen;
  const origin = config.root ? await originUrl(config.root) : null;
  return origin ? forgeForOrigin(origin) : 'none';
}
