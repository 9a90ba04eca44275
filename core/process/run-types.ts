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

/**
 * How a program's end reads as a RunResult, wherever it was started (run.ts, or the process
 * helper): one that could not start is 127 when it is not there (as a shell says) and 1
 * otherwise, with node's message when it printed nothing; one a signal ended is 143.
 */
export function runEnd(o: {
  code: number | null;
  signal: string | null;
  error: { code?: string; message: string } | null;
  stdout: string;
  stderr: string;
}): RunResult {
  const { stdout, stderr } = o;
  if (o.error) return { code: o.error.code === 'ENOENT' ? 127 : 1, stdout, stderr: stderr || o.error.message };
  return { code: o.code ?? (o.signal ? 128 + 15 : 1), stdout, stderr };
}
