import type { Log } from '../ports/log.js';

export interface ConsoleLogOptions {
  prefix?: string;
  /** Colour only on a TTY and never when NO_COLOR is set. */
  color?: boolean;
  debug?: boolean;
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
}

export function useColor(stream: NodeJS.WritableStream & { isTTY?: boolean }, env = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb';
}

const paint = (on: boolean, code: number, s: string) => (on ? `\u001b[${code}m${s}\u001b[0m` : s);

/** Lines to stdout (info) and stderr (warnings, errors), each with the log's prefix. */
export class ConsoleLog implements Log {
  private readonly out: NodeJS.WritableStream;
  private readonly err: NodeJS.WritableStream;
  private readonly color: boolean;

  constructor(private readonly opts: ConsoleLogOptions = {}) {
    this.out = opts.out ?? process.stdout;
    this.err = opts.err ?? process.stderr;
    this.color = opts.color ?? useColor(this.err as NodeJS.WritableStream & { isTTY?: boolean });
  }

  private line(stream: NodeJS.WritableStream, text: string) {
    const prefix = this.opts.prefix ?? '';
    for (const l of text.split('\n')) stream.write(`${prefix}${l}\n`);
  }

  info(message: string) {
    this.line(this.out, message);
  }
  warn(message: string) {
    this.line(this.err, `${paint(this.color, 33, 'warning:')} ${message}`);
  }
  error(message: string) {
    this.line(this.err, `${paint(this.color, 31, 'error:')} ${message}`);
  }
  debug(message: string) {
    if (this.opts.debug ?? process.env.CHALK_DEBUG === '1') this.line(this.err, `debug: ${message}`);
  }
  child(prefix: string): Log {
    return new ConsoleLog({
      ...this.opts,
      out: this.out,
      err: this.err,
      color: this.color,
      prefix: `${this.opts.prefix ?? ''}${prefix}`,
    });
  }
}
