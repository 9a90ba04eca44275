import { cleanLog, eachLine, linesHolding } from '../log.js';

/**
 * Small helpers the runner files share: IDs are read line by line from the
 * cleaned log (colour codes and carriage returns removed).
 */

/** One pattern a line may match, and the ID it gives (capture 1 unless told). */
export interface IdPattern {
  pattern: RegExp;
  id?: (m: RegExpExecArray) => string;
}

/** null for an empty list: no IDs is UNKNOWN, never zero. */
export const orNull = (ids: string[]): string[] | null => (ids.length > 0 ? ids : null);

/**
 * Every ID the lines give, in output order; a line gives at most one (its first matching
 * pattern). `linesWith`, when given, holds words one of which every line any pattern matches
 * holds: a line with none of them is passed over unread (a long log's other lines cost nothing).
 */
export function idsFromLines(
  log: string,
  patterns: readonly IdPattern[],
  linesWith?: readonly string[],
): string[] | null {
  const ids: string[] = [];
  const clean = cleanLog(log);
  for (const line of linesWith ? linesHolding(clean, linesWith) : eachLine(clean)) {
    const id = idOfLine(line, patterns);
    if (id !== null) ids.push(id);
  }
  return orNull(ids);
}

/** The ID a line gives: its first matching pattern's (capture 1 unless told), null for none or ''. */
export function idOfLine(line: string, patterns: readonly IdPattern[]): string | null {
  for (const { pattern, id } of patterns) {
    const m = pattern.exec(line);
    if (m === null) continue;
    const value = id ? id(m) : m[1];
    return value !== undefined && value !== '' ? value : null;
  }
  return null;
}

/** Lines a runner's IDs are on: each holds one of `words`, and `patterns` read the IDs from them. */
export interface IdLines {
  patterns: readonly IdPattern[];
  words: readonly string[];
}

/** A runner's `failingTests` read from the lines holding its words: callable on a log, and saying which lines. */
export type LineIds = ((log: string) => string[] | null) & { readonly lines: IdLines };

/**
 * `failingTests` reading IDs from the lines holding one of `words` (every line a pattern
 * matches holds one): the one pass over a log (read.ts) collects them window by window,
 * before it knows whether the runner is there, so the log is never read again for them.
 */
export function idsOnLines(patterns: readonly IdPattern[], words: readonly string[]): LineIds {
  return Object.assign((log: string) => idsFromLines(log, patterns, words), { lines: { patterns, words } });
}

/** The lines a runner's `failingTests` names, when it does. */
export const idLinesOf = (f: (log: string) => string[] | null): IdLines | null =>
  'lines' in f ? (f as LineIds).lines : null;

/**
 * IDs read only inside sections: a line matching `opens` starts one (its
 * match decides whether the section counts), `closes` ends it, and inside a
 * counting section each line matching `item` gives an ID.
 */
export function idsInSections(
  log: string,
  s: { opens: RegExp; counts: (m: RegExpExecArray) => boolean; closes: RegExp; item: RegExp },
): string[] | null {
  const ids: string[] = [];
  let inside = false;
  for (const line of eachLine(cleanLog(log))) {
    const open = s.opens.exec(line);
    if (open) {
      inside = s.counts(open);
      continue;
    }
    if (s.closes.test(line)) {
      inside = false;
      continue;
    }
    if (!inside) continue;
    const m = s.item.exec(line);
    if (m?.[1] !== undefined && m[1] !== '') ids.push(m[1].trim());
  }
  return orNull(ids);
}

/** Characters that mean something in a JavaScript regular expression, escaped. */
export const regexEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Each value once, in first-seen order. */
export const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];

/** `^(?:a|b)$` over the escaped names: exactly one of them. */
export const exactlyOneOf = (names: readonly string[]): string => `^(?:${names.map(regexEscape).join('|')})$`;

/** The part of a report ID after its first `::` (`FILE::name`), and the part before. */
export function splitReportId(id: string): { file: string; name: string } {
  const at = id.indexOf('::');
  return at < 0 ? { file: '', name: id } : { file: id.slice(0, at), name: id.slice(at + 2) };
}

/** A repository-relative file name a runner can be given: no `..` step, no leading `/` or `-`. */
export const relativeFile = (f: string): boolean =>
  /^[^\s/-][^\s]*$/.test(f) && !f.split('/').includes('..') && /\.[A-Za-z0-9]+$/.test(f);
