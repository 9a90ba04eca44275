/**
 * The forge a finished ticket is submitted to (GitHub, GitLab, or a third
 * party's). Only the host talks to it; the sandbox never sees its credentials.
 * A forge also declares what the core must not name for it: how `auto` recognises its origin,
 * the CI gate files init writes and the paths the guard keeps from the agent.
 */
export interface ForgeStatus {
  /** e.g. `gh 2.60.0`; null when the CLI is missing. */
  cli: string | null;
  loggedIn: boolean;
  hint?: string;
}

export interface OpenRequest {
  repoRoot: string;
  branch: string;
  base: string;
  title: string;
  body: string;
}

/**
 * How a forge takes an origin remote for CHALK_FORGE=auto: `match` (it is this forge's, e.g. a
 * github.com URL), `fallback` (it may be: GitLab takes any host, self-hosted ones included) or
 * `no`. A match wins over a fallback; two of the best kind are refused as ambiguous.
 */
export type OriginMatch = 'match' | 'fallback' | 'no';

/** A CI gate file `chalk init` writes for a forge: how merge requests are graded there. */
export interface GateFile {
  /** Repository-relative path. */
  path: string;
  /** The text written when the file is missing (an existing file is never overwritten). */
  content: string;
  /**
   * For a file the repository may already have for its own CI (`.gitlab-ci.yml`): the text that
   * shows it runs Chalk's gate (kept), and the `action` line init prints when it does not.
   */
  existing?: { contains: string; otherwise: string };
}

export interface Forge {
  /** `github`, `gitlab`, `none`, or a plugin's own name (what CHALK_FORGE selects it by). */
  readonly name: string;
  /**
   * Whether this forge opens merge or pull requests. One that does not (`none`) leaves a
   * green run at the pushed branch, its summary printed; the doctor checks no CLI for it.
   */
  readonly opensRequests: boolean;
  status(repoRoot: string): Promise<ForgeStatus>;
  openRequest(req: OpenRequest): Promise<{ url: string | null }>;
  /** CHALK_FORGE=auto: whether the origin remote's URL is this forge's. Absent: auto never picks it. */
  matchOrigin?(url: string): OriginMatch;
  /** The CI gate files `chalk init` writes when this forge is chosen. Absent: none. */
  gateFiles?(): readonly GateFile[];
  /**
   * Repository paths no loop may change, whichever forge is chosen (a repository may move between
   * forges): this forge's CI gate files, at least. The run's guard refuses every offered forge's.
   */
  readonly guardedPaths?: readonly string[];
}
