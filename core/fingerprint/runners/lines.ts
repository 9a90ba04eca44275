import { logLines } from '../log.js';

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

/** Every ID the lines give, in output order; a line gives at most one (its first matching pattern). */
export function idsFromLines(log: string, patterns: readonly IdPattern[]): string[] | null {
  const ids: string[] = [];
  for (const line of logLines(log)) {
    for (const { pattern, id } of patterns) {
      const m = pattern.exec(line);
      if (m === null) continue;
      const value = id ? id(m) : m[1];
      if (value !== undefined && value !== '') ids.push(value);
      break;
    }
  }
  return orNull(ids);
}

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
  for (const line of logLines(log)) {
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
