import { forTerminal } from './terminal.js';

/*
 * Text the model or a sandbox wrote (a loop's summary, a blocker, review findings, spec-check
 * problems, lessons, failing test names, a plan's titles) is shown so that it cannot pass for
 * Chalk's own output: inside one of Chalk's lines as one quoted line, or as a block of lines
 * Chalk marks (`  | `), never as a line of its own that starts where Chalk's lines start.
 */

/** How much of one model-written text a line shows. */
export const MODEL_LINE_MAX = 300;

/** Zero-width and bidirectional controls: they reorder or hide what a line shows without showing themselves. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** What starts every line of a marked block (and of a log message's continuation lines). */
export const BLOCK_MARK = '  | ';

/**
 * One line of text someone else wrote: no control character, escape sequence or invisible
 * layout character; every run of whitespace (newlines and line separators included) one
 * space; cut at `max` characters.
 */
export function oneLine(text: string, max = MODEL_LINE_MAX): string {
  const flat = forTerminal(text).replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** Model text inside one of Chalk's lines: one line, in double quotes. */
export const quoted = (text: string, max?: number): string => `"${oneLine(text, max)}"`;

/** Lines someone else wrote, as a block Chalk marks: each line behind BLOCK_MARK, none blank at the end. */
export function markedBlock(text: string): string[] {
  const lines = forTerminal(text)
    .replace(INVISIBLE, '')
    .replace(/\s+$/, '')
    .split(/\r?\n|[\u2028\u2029]/);
  return lines.map((l) => `${BLOCK_MARK}${l}`.trimEnd());
}
