import type { Log } from '../ports/log.js';

export interface LogLine {
  level: 'info' | 'warn' | 'error' | 'debug';
  /** With every child's prefix, as the console would print it. */
  text: string;
}

/** A Log that keeps every line (children write into the same list, prefixed). */
export class CollectingLog implements Log {
  constructor(
    readonly lines: LogLine[] = [],
    private readonly prefix = '',
  ) {}

  info(message: string): void {
    this.lines.push({ level: 'info', text: this.prefix + message });
  }
  warn(message: string): void {
    this.lines.push({ level: 'warn', text: this.prefix + message });
  }
  error(message: string): void {
    this.lines.push({ level: 'error', text: this.prefix + message });
  }
  debug(message: string): void {
    this.lines.push({ level: 'debug', text: this.prefix + message });
  }
  child(prefix: string): Log {
    return new CollectingLog(this.lines, this.prefix + prefix);
  }

  /** Every line's text, one per line. */
  text(): string {
    return this.lines.map((l) => l.text).join('\n');
  }
}
