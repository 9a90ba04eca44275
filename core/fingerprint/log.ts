/**
 * Reading a rubric's output as text: terminal colour codes and carriage
 * returns are removed first, so the same failure reads the same whether or not
 * the runner thought it was writing to a terminal.
 */

/** ANSI CSI sequences: ESC `[`, digits, `;` or `?`, then one letter. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what is matched.
const CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** The log without colour codes or carriage returns. */
export function cleanLog(text: string): string {
  return text.replace(CSI, '').replace(/\r/g, '');
}

/** The cleaned log as lines (a trailing newline gives no extra empty line). */
export function logLines(text: string): string[] {
  const clean = cleanLog(text);
  if (clean === '') return [];
  const lines = clean.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
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
