import type { Forge, ForgeStatus, OpenRequest } from '../ports/forge.js';

/** A Forge that opens requests by recording them; `url` is what it answers. */
export class RecordingForge implements Forge {
  readonly opensRequests = true;
  readonly requests: OpenRequest[] = [];

  constructor(
    readonly name = 'recording',
    private readonly url: (req: OpenRequest, n: number) => string | null = (req, n) =>
      `https://forge.test/${encodeURIComponent(req.branch)}/${n}`,
  ) {}

  async status(): Promise<ForgeStatus> {
    return { cli: null, loggedIn: true };
  }

  async openRequest(req: OpenRequest): Promise<{ url: string | null }> {
    this.requests.push(req);
    return { url: this.url(req, this.requests.length) };
  }
}
