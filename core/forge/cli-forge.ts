import type { Forge, ForgeStatus, GateFile, OpenRequest, OriginMatch } from '../ports/forge.js';
import { run } from '../process/run.js';

/** What differs between forges driven through their own CLI (gh, glab). */
export interface ForgeCli {
  name: string;
  bin: string;
  requestArgs(req: OpenRequest): { args: string[]; input?: string };
  /** What the forge declares to the core (the Forge port's optional members), passed through. */
  matchOrigin?(url: string): OriginMatch;
  gateFiles?(): readonly GateFile[];
  guardedPaths?: readonly string[];
}

/** A forge reached through its CLI: version, login state, opening a request. */
export class CliForge implements Forge {
  readonly name: string;
  readonly opensRequests = true;
  readonly matchOrigin?: (url: string) => OriginMatch;
  readonly gateFiles?: () => readonly GateFile[];
  readonly guardedPaths?: readonly string[];
  constructor(private readonly cli: ForgeCli) {
    this.name = cli.name;
    if (cli.matchOrigin) this.matchOrigin = (url) => cli.matchOrigin?.(url) ?? 'no';
    if (cli.gateFiles) this.gateFiles = () => cli.gateFiles?.() ?? [];
    if (cli.guardedPaths) this.guardedPaths = cli.guardedPaths;
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
