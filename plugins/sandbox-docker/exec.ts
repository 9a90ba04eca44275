import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import { KeptOutput as Kept } from '../../core/host.js';
import type { ExecOptions, ExecResult } from '../../core/plugin.js';
import { engineGone, statusOf } from './docker.js';
import { quote } from './scripts.js';

/** Seconds a killed command gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_S = 3;

/**
 * The command runs under coreutils `timeout`, which makes itself the leader of
 * a new process group: its timeout, or our kill sent to that group, ends the
 * command and everything it started. The shell records the group's id (its
 * parent, `timeout`) for the kill, then runs the command (`timeout 0`: no limit).
 * Two processes per exec: each one costs tens of milliseconds on a busy engine.
 */
const pidFile = (id: string) => `/tmp/.chalk-exec-${id}`;
const RUNNER = 'echo $PPID >"/tmp/.chalk-exec-$0"; c=$1; shift; eval "$c"';

/** What the exec layer needs beyond the port's options. */
export interface RawExecOptions extends Omit<ExecOptions, 'stdin' | 'agent'> {
  defaultCwd: string;
  /** Written to stdin (then closed): text, bytes, or a stream piped in (a bundle). */
  stdin?: string | Buffer | NodeJS.ReadableStream;
  /** The container user for this exec: the sandbox user; `0:0` only for the host's own writes and the agent's start. */
  user: string;
  /** The hard cap on output bytes (stdout + stderr); past it the command is stopped. */
  maxOutputBytes: number;
}

const bytesSink = (onBytes: (b: Buffer) => void) =>
  new Writable({
    write(chunk: Buffer, _enc, cb) {
      onBytes(chunk);
      cb();
    },
  });

/** Of a bare command's stdout, the host keeps this many bytes. */
const BARE_OUTPUT_BYTES = 1024 * 1024;

/**
 * Runs a bare command in the container as `user` (no timeout wrapper, no pid
 * file) and waits for it to end: the host's own housekeeping. Its stdout (the
 * first MiB), its stderr dropped.
 */
export async function bareExec(container: Dockerode.Container, cmd: string[], user: string): Promise<string> {
  const k = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, User: user });
  const s = await k.start({});
  const chunks: Buffer[] = [];
  let kept = 0;
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (kept < BARE_OUTPUT_BYTES) chunks.push(chunk.subarray(0, BARE_OUTPUT_BYTES - kept));
      kept += chunk.length;
      cb();
    },
  });
  const err = new Writable({ write: (_c, _e, cb) => cb() });
  container.modem.demuxStream(s, out, err);
  await new Promise<void>((r) => {
    s.on('end', r);
    s.on('close', r);
    s.on('error', () => r());
  });
  return Buffer.concat(chunks).toString('utf8');
}

/** Sends a signal to the process group of a running exec, from a second exec in the same container, as the same user. */
async function killGroup(
  container: Dockerode.Container,
  id: string,
  sig: 'TERM' | 'KILL',
  user: string,
): Promise<void> {
  try {
    await bareExec(
      container,
      ['bash', '-c', `p=$(cat "$1" 2>/dev/null) && kill -${sig} -- "-$p" 2>/dev/null; true`, '_', pidFile(id)],
      user,
    );
  } catch {
    // The container may already be gone: nothing left to kill.
  }
}

/** The exec's exit code; -1 when it cannot be known (the container was removed under it, e.g. on a signal). */
async function exitCodeOf(exec: Dockerode.Exec): Promise<number> {
  for (let i = 0; i < 200; i++) {
    let info: Awaited<ReturnType<Dockerode.Exec['inspect']>>;
    try {
      info = await exec.inspect();
    } catch (err) {
      if (statusOf(err) === 404 || statusOf(err) === 409) return -1;
      throw err;
    }
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 10));
  }
  return -1;
}

interface Outputs {
  out: Writable;
  err: Writable;
  result(): { stdout: string; stderr: string; bytes?: Buffer; written?: number };
}

/** Text outputs, kept with head and tail (as bytes, read as UTF-8 at the end), each chunk also handed to `onOutput`. */
function textOutputs(onOutput: ExecOptions['onOutput'], count: (n: number) => boolean): Outputs {
  const kept = { stdout: new Kept(), stderr: new Kept() };
  const take = (stream: 'stdout' | 'stderr') => (b: Buffer) => {
    if (!count(b.length)) return;
    kept[stream].add(b);
    onOutput?.(b, stream);
  };
  return {
    out: bytesSink(take('stdout')),
    err: bytesSink(take('stderr')),
    result: () => ({ stdout: kept.stdout.text(), stderr: kept.stderr.text() }),
  };
}

/** Stdout written as it arrives to the open host file `fd` (a saved state), text stderr. */
function fileOutputs(fd: number, count: (n: number) => boolean): Outputs {
  const stderr = new Kept();
  let bytes = 0;
  return {
    out: bytesSink((b) => {
      if (!count(b.length)) return;
      writeSync(fd, b);
      bytes += b.length;
    }),
    err: bytesSink((b) => {
      if (count(b.length)) stderr.add(b);
    }),
    result: () => ({ stdout: '', stderr: stderr.text(), written: bytes }),
  };
}

/** Binary stdout (a file read back), text stderr. */
function bytesOutputs(count: (n: number) => boolean): Outputs {
  const chunks: Buffer[] = [];
  const stderr = new Kept();
  return {
    out: bytesSink((b) => {
      if (count(b.length)) chunks.push(b);
    }),
    err: bytesSink((b) => {
      if (count(b.length)) stderr.add(b);
    }),
    result: () => ({ stdout: '', stderr: stderr.text(), bytes: Buffer.concat(chunks) }),
  };
}

/** Where a command's output goes: kept as text, kept as bytes, or written to a host file. */
type OutputKind = { kind: 'text' } | { kind: 'bytes' } | { kind: 'file'; fd: number };

function outputsFor(o: OutputKind, opts: RawExecOptions, count: (n: number) => boolean): Outputs {
  if (o.kind === 'file') return fileOutputs(o.fd, count);
  return o.kind === 'bytes' ? bytesOutputs(count) : textOutputs(opts.onOutput, count);
}

type RunResult = ExecResult & { bytes?: Buffer; written?: number };

/** One exec, a broken connection to the engine said as such (engineGone). */
async function runExec(
  container: Dockerode.Container,
  argv: string[],
  opts: RawExecOptions,
  output: OutputKind,
): Promise<RunResult> {
  try {
    return await execOnce(container, argv, opts, output);
  } catch (err) {
    throw engineGone(err);
  }
}

async function execOnce(
  container: Dockerode.Container,
  argv: string[],
  opts: RawExecOptions,
  output: OutputKind,
): Promise<RunResult> {
  opts.signal?.throwIfAborted();
  const id = randomBytes(8).toString('hex');
  const limit = opts.timeoutMs && opts.timeoutMs > 0 ? `${(opts.timeoutMs / 1000).toFixed(3)}s` : '0';
  const withStdin = opts.stdin !== undefined;
  const exec = await container.exec({
    Cmd: ['timeout', '-k', String(KILL_GRACE_S), limit, 'bash', '-c', RUNNER, id, ...argv],
    AttachStdin: withStdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    WorkingDir: opts.cwd ?? opts.defaultCwd,
    Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
    User: opts.user,
  });
  const stream = await exec.start({ hijack: true, stdin: withStdin });
  let total = 0;
  let capped = false;
  const stopAll = () => {
    void killGroup(container, id, 'TERM', opts.user);
    setTimeout(() => void killGroup(container, id, 'KILL', opts.user), KILL_GRACE_S * 1000).unref();
  };
  // Past the cap nothing more is taken, and the command is stopped once.
  const count = (n: number) => {
    if (capped) return false;
    if (total + n > opts.maxOutputBytes) {
      capped = true;
      stopAll();
      return false;
    }
    total += n;
    return true;
  };
  const outputs = outputsFor(output, opts, count);
  container.modem.demuxStream(stream, outputs.out, outputs.err);
  const ended = new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      outputs.out.end();
      outputs.err.end();
      resolve();
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
  });
  if (typeof opts.stdin === 'string' || Buffer.isBuffer(opts.stdin)) {
    stream.end(opts.stdin);
  } else if (opts.stdin) {
    opts.stdin.pipe(stream);
  }
  const started = Date.now();
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    stopAll();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  // A backstop in case the in-container timeout itself cannot act.
  const backstop =
    opts.timeoutMs && opts.timeoutMs > 0
      ? setTimeout(() => void killGroup(container, id, 'KILL', opts.user), opts.timeoutMs + (KILL_GRACE_S + 10) * 1000)
      : undefined;
  try {
    await ended;
  } finally {
    clearTimeout(backstop);
    opts.signal?.removeEventListener('abort', onAbort);
  }
  if (aborted) throw opts.signal?.reason ?? new Error('aborted');
  const exitCode = await exitCodeOf(exec);
  const elapsed = Date.now() - started;
  const timedOut =
    opts.timeoutMs !== undefined &&
    opts.timeoutMs > 0 &&
    elapsed >= opts.timeoutMs - 50 &&
    (exitCode === 124 || exitCode === 137);
  return { exitCode, ...outputs.result(), timedOut, outputCapped: capped };
}

/**
 * `bash -c command` in a running container: streamed output (the host keeps
 * its head and tail, and stops the command past its output cap), stdin, a
 * timeout that kills the whole process group, and abort by signal.
 */
export function execInContainer(
  container: Dockerode.Container,
  command: string,
  opts: RawExecOptions,
): Promise<ExecResult> {
  return runExec(container, [command], opts, { kind: 'text' });
}

/** Like execInContainer with positional arguments (`$1`...), its stdout taken as bytes. */
export async function execForBytes(
  container: Dockerode.Container,
  script: string,
  args: string[],
  opts: RawExecOptions,
): Promise<ExecResult & { bytes: Buffer }> {
  const r = await runExec(container, [script, ...args], opts, { kind: 'bytes' });
  return { ...r, bytes: r.bytes ?? Buffer.alloc(0) };
}

/**
 * The agent CLI's command as a root exec runs it: setpriv starts it as the
 * sandbox user (`uid:gid`), so its stdin, stdout and stderr are the exec's
 * pipes, which are root's. No other process of the sandbox user can open them
 * through /proc/PID/fd: none can take the prompt, or write into what the host
 * reads as the call's result, while the CLI runs or after it ends.
 */
export function asAgent(command: string, user: string): string {
  const [uid, gid] = user.split(':');
  return `exec setpriv --reuid=${uid} --regid=${gid ?? uid} --clear-groups -- bash -c ${quote(command)}`;
}

/**
 * Like execInContainer, its stdout written as it arrives to the open host file `fd`
 * (within the output cap, which stops the command); `bytes` is how many were written.
 */
export async function execToFile(
  container: Dockerode.Container,
  command: string,
  fd: number,
  opts: RawExecOptions,
): Promise<ExecResult & { bytes: number }> {
  const r = await runExec(container, [command], opts, { kind: 'file', fd });
  return { ...r, bytes: r.written ?? 0 };
}
