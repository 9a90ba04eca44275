/** One line of `chalk doctor`: `ok`, `FAIL` (a required check failed) or `--` (optional, not set up). */
export type CheckStatus = 'ok' | 'FAIL' | '--';

export interface CheckResult {
  status: CheckStatus;
  label: string;
  detail?: string;
}

/**
 * A doctor check. Plugins add their own (`kernel.checks.push(...)`); a check
 * returns one or more lines and never throws (a throw is reported as FAIL).
 */
export interface DoctorCheck {
  id: string;
  run(): Promise<CheckResult | CheckResult[]>;
}

/**
 * What a plugin adds to `chalk decider status` (e.g. decider-local's installation): read when the
 * command runs, never during a loop. `read` returns null when it has nothing to say (nothing
 * installed); a throw is shown as that part's error, never fails the command.
 */
export interface DeciderStatusPart {
  /** The key of its object in `chalk decider status --json`'s `parts`. */
  id: string;
  read(): Promise<{ json: Record<string, unknown>; lines: string[] } | null>;
}
