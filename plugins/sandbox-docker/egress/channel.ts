import { PassThrough } from 'node:stream';
import type Dockerode from 'dockerode';
import { docker } from '../docker.js';
import type { CtlRequest } from './daemon/ctl.js';
import { DAEMON_ID, EGRESS_PATHS } from './daemon/layout.js';

/**
 * The host's end of the egress daemon's control connection: a `docker exec` of socat on the
 * daemon's socket, JSON lines in and out, so it works wherever the engine is. Requests go one
 * at a time. Closing it ends the run in the daemon; so does this process dying, since the
 * engine then closes the exec's stdin.
 */
export class EgressChannel {
  private queue: Promise<unknown> = Promise.resolve();
  private waiting: ((line: string | null) => void) | null = null;
  private lines: string[] = [];
  private ended = false;

  private constructor(private readonly stream: NodeJS.ReadWriteStream) {}

  static async open(container: Dockerode.Container): Promise<EgressChannel> {
    const exec = await container.exec({
      Cmd: ['socat', '-', `UNIX-CONNECT:${EGRESS_PATHS.ctl}`],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      User: `${DAEMON_ID}:${DAEMON_ID}`,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as NodeJS.ReadWriteStream;
    const channel = new EgressChannel(stream);
    const out = new PassThrough();
    (await docker()).modem.demuxStream(stream, out, new PassThrough().resume());
    let buffered = '';
    out.setEncoding('utf8');
    out.on('data', (d: string) => {
      buffered += d;
      let cut = buffered.indexOf('\n');
      while (cut >= 0) {
        channel.take(buffered.slice(0, cut));
        buffered = buffered.slice(cut + 1);
        cut = buffered.indexOf('\n');
      }
    });
    const end = () => channel.finish();
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
    return channel;
  }

  private take(line: string): void {
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      w(line);
    } else this.lines.push(line);
  }

  private finish(): void {
    this.ended = true;
    const w = this.waiting;
    this.waiting = null;
    w?.(null);
  }

  private next(): Promise<string | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((r) => {
      this.waiting = r;
    });
  }

  /** Sends one request and resolves its answer; rejects with the daemon's error, or when the channel is gone. */
  request<T extends Record<string, unknown>>(req: CtlRequest): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.ended) throw new Error('the egress control connection is closed');
      this.stream.write(`${JSON.stringify(req)}\n`);
      const line = await this.next();
      if (line === null) throw new Error('the egress control connection closed');
      const answer = JSON.parse(line) as T & { ok?: boolean; error?: string };
      if (answer.ok !== true) throw new Error(`the egress daemon refused ${req.op}: ${answer.error ?? 'no reason'}`);
      return answer;
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Ends the run in the daemon (its token refused from then on), then the connection. */
  async close(): Promise<void> {
    if (this.ended) return;
    await this.request({ op: 'close' }).catch(() => undefined);
    this.stream.end();
    (this.stream as unknown as { destroy?: () => void }).destroy?.();
    this.finish();
  }
}
