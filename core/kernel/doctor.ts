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
