import { openCappedLog } from '../../fs/host-file.js';
import type { ExecResult, SandboxSession } from '../../ports/sandbox.js';
import { KeptOutput, WholeChars } from '../../process/kept-output.js';

const MIB = 1024 * 1024;

/** Quotes one word for a POSIX shell. */
export const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface LoggedExec {
  /** The host log file (in the run's io directory, which no sandbox reaches). */
  logPath: string;
  /** `CHALK_OUTPUT_CAP_MB`: the most output the command may print and the log holds. */
  capMb: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * One of the repository's own commands (setup, rubric) in the sandbox: `bash
 * -c COMMAND` in the clone, without the agent's credentials, its output
 * written as it arrives to a log capped at `capMb`. A command that prints past
 * the cap is stopped, and the log's last line says so. Nothing it started
 * outlives it: every process left in the sandbox is ended once it returns.
 */
export interface LoggedResult extends ExecResult {
  /**
   * stdout and stderr as they came, interleaved, as much as the host keeps (head and tail): the
   * bytes, as the log holds them (a character is never cut in two where the streams meet).
   */
  output: Buffer;
}

export async function runLogged(session: SandboxSession, command: string, o: LoggedExec): Promise<LoggedResult> {
  const cap = o.capMb * MIB;
  const log = openCappedLog(o.logPath, cap);
  const kept = new KeptOutput();
  const whole = { stdout: new WholeChars(), stderr: new WholeChars() };
  const take = (b: Buffer) => {
    if (b.length === 0) return;
    log.write(b);
    kept.add(b);
  };
  let r: ExecResult | undefined;
  try {
    r = await session.exec(`bash -c ${shellWord(command)}`, {
      maxOutputBytes: cap,
      onOutput: (c, stream) => take(whole[stream].take(c)),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } finally {
    take(whole.stdout.end());
    take(whole.stderr.end());
    log.close(r?.outputCapped ? `\n[chalk: the command ${cappedNote(o.capMb)}]\n` : undefined);
    await session.reapStrays();
  }
  return { ...r, output: kept.bytes() };
}

/** The line a capped command's log ends with, and its loop's reason. */
export const cappedNote = (capMb: number) =>
  `printed more than CHALK_OUTPUT_CAP_MB (${capMb} MiB) of output and was stopped`;
