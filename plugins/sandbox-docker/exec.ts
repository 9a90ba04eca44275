import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type Dockerode from 'dockerode';
import type { ExecOptions, ExecResult } from '../../core/ports/sandbox.js';

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
const RUNNER = 'echo $PPID >"/tmp/.chalk-exec-$0"; c=$1; set --; eval "$c"';

function sink(onText: (s: string) => void): Writable {
  const decoder = new StringDecoder('utf8');
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      const s = decoder.write(chunk);
      if (s) onText(s);
      cb();
    },
    final(cb) {
      const s = decoder.end();
      if (s) onText(s);
      cb();
    },
  });
}

/** Sends a signal to the process group of a running exec, from a second exec in the same container. */
async function killGroup(container: Dockerode.Container, id: string, sig: 'TERM' | 'KILL'): Promise<void> {
  try {
    const k = await container.exec({
      Cmd: ['bash', '-c', `p=$(cat "$1" 2>/dev/null) && kill -${sig} -- "-$p" 2>/dev/null; true`, '_', pidFile(id)],
      AttachStdout: true,
      AttachStderr: true,
    });
    const s = await k.start({});
    s.resume();
    await new Promise<void>((r) => {
      s.on('end', r);
      s.on('close', r);
      s.on('error', () => r());
    });
  } catch {
    // The container may already be gone: nothing left to kill.
  }
}

async function exitCodeOf(exec: Dockerode.Exec): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 10));
  }
  return -1;
}

/**
 * `bash -c command` in a running container: streamed output, stdin, a
 * timeout that kills the whole process group, and abort by signal.
 */
export async function execInContainer(
  container: Dockerode.Container,
  command: string,
  opts: ExecOptions & { defaultCwd: string },
): Promise<ExecResult> {
  opts.signal?.throwIfAborted();
  const id = randomBytes(8).toString('hex');
  const limit = opts.timeoutMs && opts.timeoutMs > 0 ? `${(opts.timeoutMs / 1000).toFixed(3)}s` : '0';
  const exec = await container.exec({
    Cmd: ['timeout', '-k', String(KILL_GRACE_S), limit, 'bash', '-c', RUNNER, id, command],
    AttachStdin: opts.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    WorkingDir: opts.cwd ?? opts.defaultCwd,
    Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
  });
  const stream = await exec.start({ hijack: true, stdin: opts.stdin !== undefined });
  let stdout = '';
  let stderr = '';
  const out = sink((s) => {
    stdout += s;
    opts.onOutput?.(s, 'stdout');
  });
  const err = sink((s) => {
    stderr += s;
    opts.onOutput?.(s, 'stderr');
  });
  container.modem.demuxStream(stream, out, err);
  const ended = new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      out.end();
      err.end();
      resolve();
    };
    stream.on('end', finish);
    stream.on('close', finish);
    stream.on('error', finish);
  });
  if (opts.stdin !== undefined) {
    stream.write(opts.stdin);
    stream.end();
  }
  const started = Date.now();
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    void killGroup(container, id, 'TERM');
    setTimeout(() => void killGroup(container, id, 'KILL'), KILL_GRACE_S * 1000).unref();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  // A backstop in case the in-container timeout itself cannot act.
  const backstop =
    opts.timeoutMs && opts.timeoutMs > 0
      ? setTimeout(() => void killGroup(container, id, 'KILL'), opts.timeoutMs + (KILL_GRACE_S + 10) * 1000)
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
  return { exitCode, stdout, stderr, timedOut };
}
