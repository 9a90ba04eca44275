/**
 * Reading a rubric's output as text: terminal colour codes and carriage
 * returns are removed first, so the same failure reads the same whether or not
 * the runner thought it was writing to a terminal.
 */

/** ANSI CSI sequences: ESC `[`, digits, `;` or `?`, then one letter. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
const CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/**
 * The log without colour codes or carriage returns. A log without an ESC or a carriage
 * return is returned as it is, with no pass of the patterns over it (a cleaned log is read
 * again by each runner).
 */
export function cleanLog(text: string): string {
  const plain = text.includes('\u001b') ? text.replace(CSI, '') : text;
  return plain.includes('\r') ? plain.replace(/\r/g, '') : plain;
}

/** The cleaned log as lines (a trailing newline gives no extra empty line). */
export function logLines(text: string): string[] {
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
