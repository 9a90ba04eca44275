/**
 * The forge a finished ticket is submitted to (GitHub, GitLab, or a third
 * party's). Only the host talks to it; the sandbox never sees its credentials.
 * The run-loop issue fills in the request-opening details.
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
}
