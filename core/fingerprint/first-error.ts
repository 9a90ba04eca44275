import { logLines } from './log.js';

/**
 * E, the first error: the first line of the (cleaned) rubric output that
 * names an error, with everything that differs between two runs of the same
 * failure taken out (times, addresses, temporary paths, line numbers,
 * durations, spacing). Empty when no line names an error.
 */

/** A line naming an error (case-sensitive; `ERR!` catches npm's banner so it can be judged generic). */
export const ERROR_LINE = /error|Error:|ERR!|FAIL|panic|Traceback|assert/;

/**
 * The normalisation, applied in this order, each to every match. Times come
 * before `:line:col`, which would otherwise eat their colons.
 */
export const NORMALISE: ReadonlyArray<readonly [RegExp, string]> = [
  // ISO dates, with optional time, fraction and zone.
  [/[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?/g, '<time>'],
  // Clock times.
  [/[0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?/g, '<time>'],
  // Addresses.
  [/0x[0-9a-fA-F]+/g, '0x?'],
  // Temporary paths, up to whitespace, a colon, a quote or a parenthesis.
  [/(\/private)?\/(tmp|var\/tmp|var\/folders)\/[^ \t\n\v\f\r:"()]*/g, '<tmp>'],
  // :line and :line:col.
  [/:[0-9]+(:[0-9]+)?/g, ''],
  // Durations; the character after the unit is kept.
  [/[0-9]+(\.[0-9]+)? ?(ns|us|ms|s|m|h)([^A-Za-z0-9_]|$)/g, '<d>$3'],
  // Spacing: runs collapse to one space, then the ends are trimmed.
  [/[ \t\n\v\f\r]+/g, ' '],
  [/^ /, ''],
  [/ $/, ''],
];

/** Banners that say only that something failed, not what: an E matching one carries no identity. */
export const GENERIC_ERRORS: readonly RegExp[] = [
  /^FAIL( .*)?$/, // go: FAIL <pkg>; jest: FAIL <file>
  /^npm ERR! Test failed/, // npm test
  /^error:?$/, // a bare error:
  /^[= ]*[0-9]+ failed([ ,].*)?$/, // pytest's "N failed" summary
  /^error: test failed/, // cargo test
  /^=+ FAILURES =+$/, // pytest's section banner
  /^Traceback \(most recent call last\):$/, // python
];

export function normaliseError(line: string): string {
  return NORMALISE.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), line);
}

/** E for a rubric log: normalised, or '' when no line names an error. */
export function firstError(log: string): string {
  const line = logLines(log).find((l) => ERROR_LINE.test(l));
  return line === undefined ? '' : normaliseError(line);
}

/** True when E is only a runner's banner. */
export function isGenericError(e: string): boolean {
  return GENERIC_ERRORS.some((re) => re.test(e));
}

/** True when E identifies a failure: non-empty and not a banner. */
export function isSpecificError(e: string): boolean {
  return e !== '' && !isGenericError(e);
}
