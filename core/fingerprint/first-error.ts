import { cleanLog, eachLine } from './log.js';
import { detectRunners, RUNNERS, type Runner } from './runners/index.js';

/**
 * E, the first error: the first line of the (cleaned) rubric output that
 * names a specific error, with everything that differs between two runs of
 * the same failure taken out (times, addresses, temporary paths, line
 * numbers, durations, spacing). In order:
 *
 * 1. the first line an error pattern of a runner the log looks like matches
 *    (`E   AssertionError: ...`, `AssertionError [ERR_ASSERTION]: ...`,
 *    `thread 'x' panicked at ...`), when it is not a banner; with no runner
 *    detected, every runner's patterns are tried. When that runner says the
 *    line only introduces the specifics (`errorContinues`), the next
 *    non-blank line (within CONTINUATION_LINES) is joined to it;
 * 2. else the first line naming an error by keyword (ERROR_LINE) that is not
 *    a banner (GENERIC_ERRORS and every runner's `banner`);
 * 3. else the first banner, so that E says "generic" rather than nothing.
 *
 * Empty when no line names an error.
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
  // Rust's thread ID (1.89+): `thread 'tests::x' (23599) panicked at`.
  [/(thread '[^']*') \([0-9]+\)/g, '$1'],
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

/** How far past an introducing error line its specifics are looked for. */
export const CONTINUATION_LINES = 3;

/** Every banner: core's GENERIC_ERRORS and each registered runner's. */
function banners(runners: readonly Runner[]): RegExp[] {
  return [...GENERIC_ERRORS, ...runners.flatMap((r) => r.banner ?? [])];
}

const ALL_BANNERS = banners(RUNNERS);

/** E for a rubric log: normalised, or '' when no line names an error. */
export function firstError(log: string, runners: readonly Runner[] = RUNNERS): string {
  const clean = cleanLog(log);
  return firstErrorIn(clean, detectRunners(clean, runners), runners);
}

/** `firstError` of a log already cleaned (`cleanLog`), `detected` its runners among `runners`. */
export function firstErrorIn(clean: string, detected: readonly Runner[], runners: readonly Runner[] = RUNNERS): string {
  const asked = detected.length > 0 ? detected : runners;
  const bannerList = runners === RUNNERS ? ALL_BANNERS : banners(runners);
  const specific = (line: string): string | null => {
    const e = normaliseError(line);
    return e !== '' && !bannerList.some((re) => re.test(e)) ? e : null;
  };
  let next = 0;
  for (const line of eachLine(clean)) {
    next += line.length + 1;
    const runner = asked.find((r) => r.errorLine?.some((re) => re.test(line)));
    if (runner === undefined) continue;
    const e = specific(line);
    if (e === null) continue;
    if (!runner.errorContinues?.some((re) => re.test(line))) return e;
    return normaliseError(`${line} ${continuation(linesFrom(clean, next, CONTINUATION_LINES + DIFF_EXTRA))}`.trim());
  }
  let firstBanner: string | null = null;
  for (const line of eachLine(clean)) {
    if (!ERROR_LINE.test(line)) continue;
    const e = specific(line);
    if (e !== null) return e;
    firstBanner ??= normaliseError(line);
  }
  return firstBanner ?? '';
}

/** At most `n` lines of the cleaned log from the line starting at `from`. */
function linesFrom(clean: string, from: number, n: number): string[] {
  const lines: string[] = [];
  for (const line of eachLine(clean, from)) {
    if (lines.length === n) break;
    lines.push(line);
  }
  return lines;
}

/** node:assert's diff header (Node 18 and 20 print it before the values), which says nothing of the failure. */
const DIFF_HEADER = /^\s*\+ actual - expected\s*$/;
/** Lines past CONTINUATION_LINES that a diff header within them lets the values take. */
const DIFF_EXTRA = 2;

/**
 * What follows an error line that only introduces its specifics: the next
 * non-blank line, past node's `+ actual - expected` header; a `+ actual` /
 * `- expected` pair is taken together, so two different values never read alike.
 */
function continuation(after: readonly string[]): string {
  const near = after.slice(0, CONTINUATION_LINES);
  const window = near.some((l) => DIFF_HEADER.test(l)) ? after.slice(0, CONTINUATION_LINES + DIFF_EXTRA) : near;
  const rest = window.filter((l) => l.trim() !== '' && !DIFF_HEADER.test(l)).slice(0, 2);
  const [first, second] = rest;
  if (first === undefined) return '';
  if (/^\s*\+ /.test(first) && second !== undefined && /^\s*- /.test(second)) return `${first.trim()} ${second.trim()}`;
  return first;
}

/** True when E is only a runner's banner (core's GENERIC_ERRORS or a registered runner's). */
export function isGenericError(e: string): boolean {
  return ALL_BANNERS.some((re) => re.test(e));
}

/** True when E identifies a failure: non-empty and not a banner. */
export function isSpecificError(e: string): boolean {
  return e !== '' && !isGenericError(e);
}
