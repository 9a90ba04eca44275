import type { Log } from '../ports/log.js';
import { BLOCK_MARK } from '../text/model.js';
import { forTerminal } from '../text/terminal.js';

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

/**
 * Lines to stdout (info) and stderr (warnings, errors), each with the log's prefix.
 * Messages carry text from the repository and the sandbox, so control characters
 * and escape sequences are stripped here, before Chalk's own colours are added.
 */
export class ConsoleLog implements Log {
  private readonly out: NodeJS.WritableStream;
  private readonly err: NodeJS.WritableStream;
  private readonly color: boolean;

  constructor(private readonly opts: ConsoleLogOptions = {}) {
    this.out = opts.out ?? process.stdout;
    this.err = opts.err ?? process.stderr;
    this.color = opts.color ?? useColor(this.err as NodeJS.WritableStream & { isTTY?: boolean });
  }

  /**
   * Writes the message line by line; `label` (Chalk's own, possibly coloured) starts the first
   * line, and every further line is marked as its continuation (BLOCK_MARK), so text a message
   * carries from the model or a sandbox never starts a line of its own.
   */
  private line(stream: NodeJS.WritableStream, message: string, label = '') {
    const prefix = forTerminal(this.opts.prefix ?? '');
    let first: string | null = label;
    for (const l of forTerminal(message).split(/\r?\n|[\u2028\u2029]/)) {
      stream.write(first === null ? `${prefix}${BLOCK_MARK}${l}\n` : `${prefix}${first}${l}\n`);
      first = null;
    }
  }

  info(message: string) {
    this.line(this.out, message);
  }
  warn(message: string) {
    this.line(this.err, message, `${paint(this.color, 33, 'warning:')} `);
  }
  error(message: string) {
    this.line(this.err, message, `${paint(this.color, 31, 'error:')} `);
  }
  debug(message: string) {
    if (this.opts.debug ?? process.env.CHALK_DEBUG === '1') this.line(this.err, message, 'debug: ');
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
