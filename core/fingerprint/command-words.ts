/**
 * The words of a rubric command, for the flaky rerun to add a selection to
 * it: a deliberately small part of the shell. A command is `&&`-joined simple
 * commands of plain words, single-quoted words, double-quoted words with
 * nothing to expand, and output redirections (`> file`, `2>&1`). Anything else
 * (`;`, pipes, `||`, subshells, `$`, backquotes, backslashes, globbing in
 * quotes, here-documents) is not understood, and the rerun runs the rubric
 * whole: a command this cannot read exactly is never rewritten.
 */

export interface Word {
  /** The word as the shell sees it, quotes removed. */
  value: string;
  /** The word as written (re-emitted unchanged when it is kept). */
  raw: string;
  /** An output redirection (`>`, `>>`, `2>`, `2>&1`, ...) or its target. */
  redirect: boolean;
}

const PLAIN = /[A-Za-z0-9_./:=@%+,^~*?[\]{}-]/;
const REDIRECT = /^(?:[0-9]?>&[0-9]|&>|[0-9]?>>?)/;

/** Quotes one word for a POSIX shell. */
export const shellWord = (s: string): string =>
  /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

/** The `&&`-joined simple commands of `command`, each a list of words; null when it is more than that. */
export function commandWords(command: string): Word[][] | null {
  const segments: Word[][] = [[]];
  let i = 0;
  const s = command.trim();
  let expectTarget = false;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (s.startsWith('&&', i)) {
      if (expectTarget || (segments[segments.length - 1] as Word[]).length === 0) return null;
      segments.push([]);
      i += 2;
      continue;
    }
    const redirect = REDIRECT.exec(s.slice(i));
    if (redirect) {
      const op = redirect[0];
      (segments[segments.length - 1] as Word[]).push({ value: op, raw: op, redirect: true });
      i += op.length;
      // `2>&1` is whole; `> file` takes the next word as its target.
      expectTarget = !/&[0-9]$/.test(op);
      continue;
    }
    let value = '';
    let raw = '';
    while (i < s.length && s[i] !== ' ' && s[i] !== '\t') {
      const ch = s[i] as string;
      if (ch === "'") {
        const end = s.indexOf("'", i + 1);
        if (end < 0) return null;
        value += s.slice(i + 1, end);
        raw += s.slice(i, end + 1);
        i = end + 1;
      } else if (ch === '"') {
        const end = s.indexOf('"', i + 1);
        if (end < 0) return null;
        const inner = s.slice(i + 1, end);
        if (/[$`\\!]/.test(inner)) return null;
        value += inner;
        raw += s.slice(i, end + 1);
        i = end + 1;
      } else if (PLAIN.test(ch) && !(ch === '&' || ch === '>')) {
        value += ch;
        raw += ch;
        i++;
      } else if (ch === '&' || ch === '>') {
        break;
      } else {
        return null;
      }
    }
    if (raw === '') return null;
    // An unquoted glob or brace would expand: such a word is not read.
    if (/[*?[\]{}]/.test(raw.replace(/'[^']*'|"[^"]*"/g, '')) && !expectTarget) return null;
    (segments[segments.length - 1] as Word[]).push({ value, raw, redirect: expectTarget });
    expectTarget = false;
  }
  if (expectTarget || (segments[segments.length - 1] as Word[]).length === 0) return null;
  return segments;
}
