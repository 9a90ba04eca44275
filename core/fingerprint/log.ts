import { isAscii } from 'node:buffer';

/**
 * Reading a rubric's output as text: terminal colour codes and carriage
 * returns are removed first, so the same failure reads the same whether or not
 * the runner thought it was writing to a terminal.
 */

/**
 * A rubric's output: the bytes the sandbox handed over (read as UTF-8, an invalid sequence
 * becoming U+FFFD as `Buffer#toString` does), or text already decoded.
 */
export type LogInput = string | Uint8Array;

/**
 * ANSI CSI sequences: ESC `[`, digits, `;` or `?`, then one letter; a run of them is removed
 * in one match (as each would be: a terminal's colour and weight often come two at a time).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
const CSI = /(?:\u001b\[[0-9;?]*[A-Za-z])+/g;

/**
 * Text without colour codes or carriage returns. Text without an ESC or a carriage return is
 * returned as it is, with no pass of the patterns over it (a cleaned log is read again by
 * each runner).
 */
function cleanText(text: string): string {
  const plain = text.includes('\u001b') ? text.replace(CSI, '') : text;
  return plain.includes('\r') ? plain.replace(/\r/g, '') : plain;
}

/** The log without colour codes or carriage returns (bytes read as UTF-8 first). */
export function cleanLog(log: LogInput): string {
  return typeof log === 'string' ? cleanText(log) : LogWindows.of(log).text();
}

/** How many bytes of a log a window holds (at least: a window ends at a line's end). */
export const WINDOW_BYTES = 64 * 1024;

/** A line holding something other than whitespace (`\s`, as the runners' patterns mean it). */
const NON_BLANK = /\S/;

/**
 * A log read as cleaned text a window at a time, each window whole lines (every window but
 * the last ends with its newline), so that a 50 MB log is never one 50 MB string: a window
 * of bytes is decoded (Latin-1 when it is ASCII, UTF-8 otherwise) and cleaned on its own,
 * which gives what cleaning the whole decoded log gives, cut at the same newlines (a newline
 * is never part of a UTF-8 sequence, nor of a colour code). Text is one window.
 */
export class LogWindows {
  /** Where each window starts in the bytes, and where the last ends; [0, length] for text. */
  private readonly bounds: number[];
  private readonly recent = new Map<number, string>();
  private whole: string | null = null;

  private constructor(
    private readonly bytes: Buffer | null,
    private readonly plain: string,
    windowBytes: number,
  ) {
    this.bounds = bytes === null ? (plain === '' ? [0] : [0, plain.length]) : windowBounds(bytes, windowBytes);
  }

  /** The log's windows: cleaned, and read as UTF-8 when it is bytes. */
  static of(log: LogInput, windowBytes = WINDOW_BYTES): LogWindows {
    if (typeof log === 'string') return new LogWindows(null, cleanText(log), windowBytes);
    const bytes = Buffer.isBuffer(log) ? log : Buffer.from(log.buffer, log.byteOffset, log.byteLength);
    return new LogWindows(bytes, '', windowBytes);
  }

  /** Text read as it is (not cleaned), in one window: a runner's checks on text a caller gives. */
  static asIs(text: string): LogWindows {
    return new LogWindows(null, text, WINDOW_BYTES);
  }

  /** How many windows the log has (none when it is empty). */
  get count(): number {
    return this.bounds.length - 1;
  }

  /** Window `k`'s cleaned text; undefined past the last. */
  at(k: number): string | undefined {
    if (k < 0 || k >= this.count) return undefined;
    if (this.bytes === null) return this.plain;
    const kept = this.recent.get(k);
    if (kept !== undefined) return kept;
    const raw = this.bytes.subarray(this.bounds[k], this.bounds[k + 1]);
    const text = cleanText(raw.toString(isAscii(raw) ? 'latin1' : 'utf8'));
    // The last few windows are kept: a pass looks a little ahead of the window it reads.
    if (this.recent.size >= 4) this.recent.delete(this.recent.keys().next().value as number);
    this.recent.set(k, text);
    return text;
  }

  /** The whole cleaned log as one string (made once, when asked). */
  text(): string {
    if (this.bytes === null) return this.plain;
    if (this.whole === null) {
      const parts: string[] = [];
      for (let k = 0; k < this.count; k++) parts.push(this.at(k) as string);
      this.whole = parts.join('');
    }
    return this.whole;
  }

  /**
   * The text after window `k` up to the end of its `n`th line holding more than whitespace
   * (newline included), or to the log's end: what a pattern that crosses at most `n` line
   * breaks, each inside a run of whitespace, may read past a line of window `k`.
   */
  after(k: number, n: number): string {
    let text = '';
    for (let j = k + 1, need = n; need > 0; j++) {
      const w = this.at(j);
      if (w === undefined) break;
      let at = 0;
      while (at < w.length && need > 0) {
        const nl = w.indexOf('\n', at);
        const end = nl < 0 ? w.length : nl;
        if (NON_BLANK.test(w.slice(at, end))) need--;
        at = end + 1;
      }
      text += w.slice(0, at);
    }
    return text;
  }

  /** The lines after the one starting at `at` in window `k`, across windows, one at a time. */
  *linesAfter(k: number, at: number): Generator<string> {
    const w = this.at(k);
    if (w === undefined) return;
    const nl = w.indexOf('\n', at);
    if (nl >= 0) yield* eachLine(w, nl + 1);
    for (let j = k + 1; j < this.count; j++) yield* eachLine(this.at(j) as string);
  }
}

/** Window bounds over bytes: each window at least `size` bytes (but the last), ending after a newline. */
function windowBounds(bytes: Buffer, size: number): number[] {
  const bounds = [0];
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(start + Math.max(1, size), bytes.length);
    if (end < bytes.length) {
      const nl = bytes.lastIndexOf(10, end - 1);
      end = nl >= start ? nl + 1 : bytes.indexOf(10, end) + 1 || bytes.length;
    }
    bounds.push(end);
    start = end;
  }
  return bounds;
}

/** The cleaned log as lines (a trailing newline gives no extra empty line). */
export function logLines(text: LogInput): string[] {
  const clean = cleanLog(text);
  if (clean === '') return [];
  const lines = clean.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The lines of a cleaned log one at a time, the same as `logLines` gives them (from the
 * line starting at `from`), none of them kept: a 50 MB log's array of lines is most of what
 * a pass over it leaves the garbage collector.
 */
export function* eachLine(clean: string, from = 0): Generator<string> {
  for (let start = from; start < clean.length; ) {
    const nl = clean.indexOf('\n', start);
    const end = nl < 0 ? clean.length : nl;
    yield clean.slice(start, end);
    start = end + 1;
  }
}

/**
 * The lines of a cleaned log that hold one of the words (none holding a newline), in order:
 * the same as `eachLine` filtered by them, found by searching for the words, so the lines
 * without them are never read.
 */
export function* linesHolding(clean: string, words: readonly string[]): Generator<string> {
  // Where each word next occurs at or after `from`; -1 once it occurs no more.
  const next = words.map((w) => clean.indexOf(w));
  for (let from = 0; ; ) {
    let hit = -1;
    for (const [i, w] of words.entries()) {
      if (next[i] !== -1 && (next[i] as number) < from) next[i] = clean.indexOf(w, from);
      const at = next[i] as number;
      if (at !== -1 && (hit === -1 || at < hit)) hit = at;
    }
    if (hit === -1) return;
    const nl = clean.indexOf('\n', hit);
    const end = nl === -1 ? clean.length : nl;
    yield clean.slice(clean.lastIndexOf('\n', hit) + 1, end);
    from = end + 1;
  }
}

/**
 * `linesHolding` as a loop calling `f` with each line: no generator's result object per line
 * (a window's lines holding a word are most of what a pass over a long log allocates).
 */
export function forLinesHolding(clean: string, words: readonly string[], f: (line: string) => void): void {
  const next = words.map((w) => clean.indexOf(w));
  for (let from = 0; ; ) {
    let hit = -1;
    for (let i = 0; i < words.length; i++) {
      let at = next[i] as number;
      if (at !== -1 && at < from) {
        at = clean.indexOf(words[i] as string, from);
        next[i] = at;
      }
      if (at !== -1 && (hit === -1 || at < hit)) hit = at;
    }
    if (hit === -1) return;
    const nl = clean.indexOf('\n', hit);
    const end = nl === -1 ? clean.length : nl;
    f(clean.slice(clean.lastIndexOf('\n', hit) + 1, end));
    from = end + 1;
  }
}

/** The most of a log's end that `tailLines` gives: a rubric may print one line of megabytes. */
export const TAIL_MAX_CHARS = 8000;

/**
 * The last `n` lines of a log, as text (for retry feedback and detention
 * signatures), and never more than its last TAIL_MAX_CHARS characters.
 */
export function tailLines(text: string, n: number): string {
  if (n <= 0 || text === '') return '';
  const lines = (text.length > TAIL_MAX_CHARS ? text.slice(-TAIL_MAX_CHARS) : text).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.slice(-n).join('\n');
}

/** True when the text holds nothing but whitespace. */
export function isBlank(text: string): boolean {
  return text.trim() === '';
}

/** POSIX `[[:space:]]` in the C locale, for patterns that must not match other Unicode spaces. */
export const SPACE = '[ \\t\\n\\v\\f\\r]';
export const NON_SPACE = '[^ \\t\\n\\v\\f\\r]';
