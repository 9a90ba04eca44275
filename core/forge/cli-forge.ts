import type { Forge, ForgeStatus, OpenRequest } from '../ports/forge.js';
import { run } from '../process/run.js';

/** What differs between forges driven through their own CLI (gh, glab). */
export interface ForgeCli {
  name: string;
  bin: string;
  requestArgs(req: OpenRequest): { args: string[]; input?: string };
}

/** A forge reached through its CLI: version, login state, opening a request. */
export class CliForge implements Forge {
  readonly name: string;
  readonly opensRequests = true;
  constructor(private readonly cli: ForgeCli) {
    this.name = cli.name;
  }

  async status(repoRoot: string): Promise<ForgeStatus> {
    const v = await run(this.cli.bin, ['--version'], { cwd: repoRoot });
    if (v.code !== 0) return { cli: null, loggedIn: false, hint: `install the ${this.cli.bin} CLI` };
    const version = v.stdout.split('\n')[0]?.trim() ?? this.cli.bin;
    const auth = await run(this.cli.bin, ['auth', 'status'], { cwd: repoRoot });
    return auth.code === 0
      ? { cli: version, loggedIn: true }
      : { cli: version, loggedIn: false, hint: `run: ${this.cli.bin} auth login` };
  }

  async openRequest(req: OpenRequest): Promise<{ url: string | null }> {
    const { args, input } = this.cli.requestArgs(req);
    const r = await run(this.cli.bin, args, { cwd: req.repoRoot, input });
    if (r.code !== 0) {
      const first = (r.stderr.trim() || r.stdout.trim()).split('\n')[0];
      throw new Error(`${this.cli.bin} could not open the request (exit ${r.code}): ${first}`);
    }
    const url = r.stdout.match(/https?:\/\/\S+/g)?.pop() ?? null;
    return { url };
  }
}
