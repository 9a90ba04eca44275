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
  /** `github`, `gitlab`, `none`, or a plugin's own name. */
  readonly name: string;
  status(repoRoot: string): Promise<ForgeStatus>;
  openRequest(req: OpenRequest): Promise<{ url: string | null }>;
}
