import { Writable } from 'node:stream';
import type Dockerode from 'dockerode';
import { engineGone, statusOf } from './docker.js';

/**
 * The host's side of the keeper's channel (share/sandbox/scripts/keeper.sh): the container's
 * stdin and stdout, attached once per session, on which the keeper (root, the container's main
 * process) runs the harness's own scripts as the sandbox user and reaps. An engine exec costs a
 * round trip of three API calls and a new process tree in the container (about 135 ms each on a
 * 2-core machine, bench/loop.mjs); a request here costs the processes the script itself starts.
 * Only the host can write the container's stdin and only the keeper writes its stdout: what a
 * command prints arrives as counted bytes inside the keeper's answer, never as an answer.
 * Requests go one at a time, in order.
 */

/** One script the keeper runs: its name (`$0`, and the key it is kept under) and its text. */
export interface KeeperScript {
  name: string;
  text: string;
}

export interface KeeperRun {
  script: KeeperScript;
  /** `uid:gid`; `0:0` runs as root (the host's own writes only). */
  user: string;
  cwd: string;
  env?: Record<string, string>;
  args?: readonly string[];
  /** Written to the script's stdin (text). */
  stdin?: string;
  /** `text`: stdout and stderr as text (no NUL bytes); `bytes`: stdout as it is. */
  mode: 'text' | 'bytes';
  /** The most bytes of stdout (and of stderr) taken; past it the answer says `capped`. */
  cap: number;
  /** End every process in the sandbox once the script exits, before its output is read. */
  reapAfter?: boolean;
  /** Past this the keeper is signalled, which ends the script (and every other process). */
  timeoutMs: number;
}

export interface KeeperAnswer {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Stdout as bytes (mode `bytes`). */
  bytes: Buffer;
  /** Stdout was over the cap: in mode `bytes` none of it is sent. */
  capped: boolean;
  timedOut: boolean;
}

/** The keeper's channel broke (the container is gone, or the keeper said something it never says). */
export class KeeperChannelError extends Error {
  override name = 'KeeperChannelError';
}

/** The most a header line may be: `ID EXIT OUTLEN ERRLEN FLAGS`. */
const HEADER_MAX = 128;
const HEADER = /^(\d+) (-?\d+) (\d+) (\d+) ([-c])$/;
/** How long a request's answer may lag behind the signal that ends it. */
const AFTER_SIGNAL_MS = 30_000;

interface Pending {
  id: number;
  resolve: (a: { exitCode: number; out: Buffer; err: Buffer; capped: boolean }) => void;
  reject: (err: Error) => void;
}

/** Splits the keeper's stdout into answers: a header line, then OUTLEN and ERRLEN bytes. */
class AnswerReader extends Writable {
  /** What has arrived and is not taken yet (kept as chunks: a bundle's megabytes are copied once). */
  private chunks: Buffer[] = [];
  private length = 0;
  private want: { id: number; exitCode: number; out: number; err: number; capped: boolean } | null = null;

  constructor(private readonly channel: { next(): Pending | undefined; fail(err: Error): void }) {
    super();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    try {
      this.drain();
    } catch (err) {
      this.channel.fail(err as Error);
    }
    cb();
  }

  /** The first `n` bytes that arrived, removed. */
  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.length);
    const head = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return head;
  }

  private drain(): void {
    for (;;) {
      if (!this.want) {
        const start = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.length);
        this.chunks = start.length > 0 ? [start] : [];
        const nl = start.subarray(0, HEADER_MAX + 1).indexOf(10);
        if (nl < 0) {
          if (start.length > HEADER_MAX) throw new KeeperChannelError('the keeper sent no answer header');
          return;
        }
        const m = HEADER.exec(
          this.take(nl + 1)
            .subarray(0, nl)
            .toString('latin1'),
        );
        if (!m) throw new KeeperChannelError('the keeper sent an answer it never sends');
        this.want = {
          id: Number(m[1]),
          exitCode: Number(m[2]),
          out: Number(m[3]),
          err: Number(m[4]),
          capped: m[5] === 'c',
        };
      }
      const w = this.want;
      if (this.length < w.out + w.err) return;
      const out = this.take(w.out);
      const err = this.take(w.err);
      this.want = null;
      const p = this.channel.next();
      if (!p || p.id !== w.id) throw new KeeperChannelError(`the keeper answered request ${w.id} out of turn`);
      p.resolve({ exitCode: w.exitCode, out, err, capped: w.capped });
    }
  }
}

/** One field of a request: its length in bytes on a line, then the bytes. */
const field = (s: string) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from(`${b.length}\n`), b]);
};

export class KeeperChannel {
  private readonly pending: Pending[] = [];
  private readonly defined = new Set<string>();
  private seq = 0;
  private broken: Error | null = null;
  /** The requests in flight, in order: each waits for the one before to be answered. */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly container: Dockerode.Container,
    private readonly stream: NodeJS.ReadWriteStream,
  ) {}

  /** Attaches to the container's stdin and stdout (its keeper must be running). */
  static async attach(container: Dockerode.Container): Promise<KeeperChannel> {
    let stream: NodeJS.ReadWriteStream;
    try {
      stream = (await container.attach({
        stream: true,
        stdin: true,
        stdout: true,
        stderr: true,
        hijack: true,
      })) as NodeJS.ReadWriteStream;
    } catch (err) {
      throw engineGone(err);
    }
    // The channel alone never keeps the process alive: a request in flight has its timer.
    (stream as unknown as { unref?: () => void }).unref?.();
    const channel = new KeeperChannel(container, stream);
    const reader = new AnswerReader({ next: () => channel.pending.shift(), fail: (e) => channel.fail(e) });
    // The keeper's own stderr (a shell's complaint) is not an answer: dropped.
    const drop = new Writable({ write: (_c, _e, cb) => cb() });
    container.modem.demuxStream(stream, reader, drop);
    // The attach can end before any call fails when the engine itself goes away: the engine is
    // asked, so a lost engine is said as such (engineGone) and a stopped container as the keeper's.
    const stopped = () => new KeeperChannelError("the sandbox's keeper is gone (the container stopped)");
    let asked = false;
    const gone = () => {
      if (channel.broken || asked) return;
      asked = true;
      container.inspect().then(
        () => channel.fail(stopped()),
        (err: unknown) => {
          const said = engineGone(err);
          channel.fail(said === err ? stopped() : (said as Error));
        },
      );
    };
    stream.on('end', gone);
    stream.on('close', gone);
    stream.on('error', (err: Error) => channel.fail(engineGone(err) as Error));
    return channel;
  }

  private fail(err: Error): void {
    if (this.broken) return;
    this.broken = err;
    for (const p of this.pending.splice(0)) p.reject(err);
    (this.stream as unknown as { destroy?: () => void }).destroy?.();
  }

  /** Sends one request and waits for its answer; one at a time. */
  private request(
    verb: string,
    fields: string[],
    timeoutMs: number,
  ): Promise<{
    exitCode: number;
    out: Buffer;
    err: Buffer;
    capped: boolean;
    timedOut: boolean;
  }> {
    const go = async () => {
      if (this.broken) throw this.broken;
      const id = ++this.seq;
      const answer = new Promise<{ exitCode: number; out: Buffer; err: Buffer; capped: boolean }>((resolve, reject) => {
        this.pending.push({ id, resolve, reject });
      });
      this.stream.write(Buffer.concat([Buffer.from(`${id} ${verb} ${fields.length}\n`), ...fields.map(field)]));
      let timedOut = false;
      let lag: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        timedOut = true;
        // The keeper's trap ends the command (and every other process); its answer follows.
        this.container.kill({ signal: 'SIGUSR1' }).catch((err: unknown) => {
          if (statusOf(err) !== 404 && statusOf(err) !== 409) this.fail(engineGone(err) as Error);
        });
        lag = setTimeout(
          () => this.fail(new KeeperChannelError(`the sandbox's keeper did not answer within ${timeoutMs} ms`)),
          AFTER_SIGNAL_MS,
        );
      }, timeoutMs);
      try {
        return { ...(await answer), timedOut };
      } finally {
        clearTimeout(timer);
        clearTimeout(lag);
      }
    };
    const r = this.tail.then(go, go);
    this.tail = r.catch(() => undefined);
    return r;
  }

  /** Ends every process in the sandbox but the init and the keeper; how many are left (0 when done). */
  async reap(timeoutMs: number): Promise<number> {
    const r = await this.request('reap', [], timeoutMs);
    const left = Number(r.out.toString('latin1'));
    return Number.isSafeInteger(left) ? left : Number.POSITIVE_INFINITY;
  }

  async run(o: KeeperRun): Promise<KeeperAnswer> {
    const { name, text } = o.script;
    if (!this.defined.has(name)) {
      // Kept by the keeper under its name: the text crosses the channel once a session.
      const def = await this.request('def', [name, text], o.timeoutMs);
      if (def.exitCode !== 0) throw new KeeperChannelError(`the keeper refused script ${name}`);
      this.defined.add(name);
    }
    const env = Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const r = await this.request(
      'run',
      [
        o.user,
        o.cwd,
        o.mode === 'bytes' ? 'b' : 't',
        String(o.cap),
        o.reapAfter ? '1' : '0',
        o.stdin ?? '',
        name,
        String(env.length),
        ...env,
        ...(o.args ?? []),
      ],
      o.timeoutMs,
    );
    return {
      exitCode: r.exitCode,
      stdout: o.mode === 'text' ? r.out.toString('utf8') : '',
      stderr: r.err.toString('utf8'),
      bytes: r.out,
      capped: r.capped,
      timedOut: r.timedOut,
    };
  }

  close(): void {
    this.fail(new KeeperChannelError('the session is closed'));
  }
}
