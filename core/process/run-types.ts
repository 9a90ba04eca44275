/** What `run` gives back (run.ts; the process helper, spawner.ts, gives the same). */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** How `run` runs a program. */
export interface RunOptions {
  cwd?: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}
