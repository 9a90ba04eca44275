import type { Forge, ForgeStatus } from '../ports/forge.js';

/** CHALK_FORGE=none: the branch is pushed and the summary printed; no request is opened. */
export class NoForge implements Forge {
  readonly name = 'none';
  readonly opensRequests = false;
  async status(): Promise<ForgeStatus> {
    return { cli: null, loggedIn: true, hint: 'CHALK_FORGE=none: requests are not opened' };
  }
  async openRequest(): Promise<{ url: string | null }> {
    return { url: null };
  }
}
