import { LogWindows } from '../log.js';

/**
 * How a runner says its output is present, as line patterns rather than an opaque
 * function, so that `detectRunners` reads a log once for every runner: a 50 MB log
 * scanned by each of some thirty patterns costs seconds; a walk over its line starts
 * testing all of them together costs one pass. Each check is also a plain function
 * (`check(log)`) that tests its patterns one by one: the same answer, the slow way.
 */

/** A detect check: callable on a log, and carrying the patterns it tests. */
export interface LineCheck {
  (log: string): boolean;
  readonly tree: { any: readonly RegExp[] } | { all: readonly LineCheck[] };
}

/** True when any of the patterns matches the log (`/^…/m` patterns may be looked for in one pass). */
export function anyLine(...patterns: RegExp[]): LineCheck {
  return Object.assign((log: string) => patterns.some((p) => p.test(log)), { tree: { any: patterns } });
}

/** True when every check is. */
export function allOf(...checks: LineCheck[]): LineCheck {
  return Object.assign((log: string) => checks.every((c) => c(log)), { tree: { all: checks } });
}

const isLineCheck = (f: (log: string) => boolean): f is LineCheck => 'tree' in f;

function patternsOf(check: LineCheck): RegExp[] {
  return 'any' in check.tree ? [...check.tree.any] : check.tree.all.flatMap(patternsOf);
}

function holds(check: LineCheck, matched: (p: RegExp) => boolean): boolean {
  return 'any' in check.tree ? check.tree.any.some(matched) : check.tree.all.every((c) => holds(c, matched));
}

/**
 * A pattern whose every match starts at a line start: multiline (and no other flag that
 * changes what matches), `^` first and no `|` outside a group, and no group reference that
 * putting it beside others would renumber. Only these are looked for together.
 */
export function fromLineStart(p: RegExp): boolean {
  if (p.flags.replace(/[gyd]/g, '') !== 'm' || !p.source.startsWith('^')) return false;
  if (/\\[1-9]|\\k<|\(\?<(?![=!])/.test(p.source)) return false;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < p.source.length; i++) {
    const c = p.source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return false;
  }
  return true;
}

/**
 * How many line breaks a match of the pattern may cross, counted as the whitespace atoms that
 * can match a newline (`\s`, `[ \t\n]`: each crossing one run of whitespace, over blank lines),
 * or Infinity when something else could (a negated class, `\D`, `.` with the s flag), when
 * a group holding one repeats, or when a lookaround looks past the match. A match of a
 * pattern with n starting on one line then lies within that line, the blank lines after it
 * and the next n lines holding more than whitespace: that is all the text it depends on.
 */
export function lineCrossings(p: RegExp): number {
  const NOT_TOLD = Number.POSITIVE_INFINITY;
  // The s flag lets `.` cross; u and v read escapes otherwise.
  if (/[^gimyd]/.test(p.flags)) return NOT_TOLD;
  const src = p.source;
  // Crossing atoms so far in each open group, the pattern itself first.
  const open: number[] = [0];
  // The atom a quantifier would repeat: its crossing atoms, and whether it is a group.
  let last = 0;
  let lastGroup = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i] as string;
    let atom: number | null = 0;
    if (c === '\\') {
      atom = escapeCrossing(src[++i] ?? '');
    } else if (c === '[') {
      const end = classEnd(src, i);
      atom = end < 0 ? null : classCrossing(src.slice(i + 1, end));
      i = end;
    } else if (c === '(') {
      if (/^\(\?<?[=!]/.test(src.slice(i, i + 4))) return NOT_TOLD;
      if (src.startsWith('(?:', i)) i += 2;
      else if (src.startsWith('(?<', i)) i = src.indexOf('>', i);
      open.push(0);
      continue;
    } else if (c === ')') {
      if (open.length < 2) return NOT_TOLD;
      last = open.pop() as number;
      lastGroup = true;
      open[open.length - 1] = (open[open.length - 1] as number) + last;
      continue;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      const bounds = c === '{' ? /^\{([0-9]+)(,([0-9]*))?\}/.exec(src.slice(i)) : null;
      if (c !== '{' || bounds !== null) {
        const upTo = bounds
          ? bounds[2] === undefined
            ? Number(bounds[1])
            : bounds[3] === ''
              ? 2
              : Number(bounds[3])
          : 2;
        const many = c === '*' || c === '+' || (bounds !== null && upTo > 1);
        if (bounds) i += bounds[0].length - 1;
        if (src[i + 1] === '?') i++;
        // A repeated atom crosses one run of whitespace; a repeated group holding one, any number.
        if (many && lastGroup && last > 0) return NOT_TOLD;
        continue;
      }
    } else if (c === '|' || c === '^' || c === '$') {
      continue;
    }
    if (atom === null) return NOT_TOLD;
    last = atom;
    lastGroup = false;
    open[open.length - 1] = (open[open.length - 1] as number) + atom;
  }
  return open.length === 1 ? (open[0] as number) : NOT_TOLD;
}

/** An escape's crossing atoms (outside a class): 1 for `\s` and `\n`, 0 for one that never matches a newline, null when not told. */
function escapeCrossing(e: string): number | null {
  if (e === 's' || e === 'n') return 1;
  if ('SdwbBtrvf'.includes(e) || !/[A-Za-z0-9]/.test(e)) return 0;
  return null; // \D, \W, \u, \x, \c, \p, \k, \0, back references
}

/** Where the class opening at `open` closes, or -1. */
function classEnd(src: string, open: number): number {
  for (let i = open + 1 + (src[open + 1] === '^' ? 1 : 0); i < src.length; i++) {
    if (src[i] === '\\') i++;
    else if (src[i] === ']') return i;
  }
  return -1;
}

/**
 * A class's crossing atoms, from its inside: 1 when it matches a newline and only whitespace,
 * 0 when it never matches a newline, null otherwise (or when not told: ranges over control
 * characters, escapes other than the plain ones).
 */
function classCrossing(inside: string): number | null {
  const negated = inside.startsWith('^');
  let newline = false;
  let other = false;
  for (let i = negated ? 1 : 0; i < inside.length; i++) {
    const c = inside[i] as string;
    if (c === '\\') {
      const e = inside[++i] ?? '';
      if (e === 's' || e === 'n') newline = true;
      else if ('Sdwb'.includes(e) || !/[A-Za-z0-9]/.test(e)) other = true;
      else if (!'tvfr'.includes(e)) return null;
    } else if (c === '-' && i > (negated ? 1 : 0) && i < inside.length - 1) {
      // A range: its ends are read as characters; one below a space is not told.
      if (inside[i - 2] === '\\') return null;
      const from = inside.charCodeAt(i - 1);
      const to = inside[i + 1] === '\\' ? -1 : inside.charCodeAt(i + 1);
      if (from < 0x20 || to < 0x20) return null;
      other = true;
    } else if (c === '\n') newline = true;
    else if (c !== ' ' && c !== '\t') other = true;
  }
  if (negated) return newline ? 0 : null;
  if (!newline) return 0;
  return other ? null : 1;
}

/** The characters a match may start with: some codes, ranges and classes; null for any (or not told). */
export interface FirstChars {
  codes: Set<number>;
  ranges: [number, number][];
  space: boolean;
  digit: boolean;
  word: boolean;
}

/** A run of whitespace, from where it is put. */
const SPACE_RUN = /\s*/y;

/** JavaScript's `\s`. */
const isSpace = (c: number): boolean =>
  (c >= 9 && c <= 13) ||
  c === 32 ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/** True when a match described by `f` may start with the character `c`. */
export function mayStartWith(f: FirstChars | null, c: number): boolean {
  if (f === null) return true;
  if (f.codes.has(c) || f.ranges.some(([a, b]) => c >= a && c <= b)) return true;
  if (f.space && isSpace(c)) return true;
  if (f.digit && c >= 48 && c <= 57) return true;
  return f.word && ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95);
}

/**
 * The characters a match of a `fromLineStart` pattern may start with, read from its source
 * after the `^`; null for any character (a pattern that may match nothing, `.`, `\S`, a
 * negated class, a lookaround, an escape not told here). Used only to pass over a line start
 * no pattern left can match at, so anything unsure is "any".
 */
export function firstChars(p: RegExp): FirstChars | null {
  if (!fromLineStart(p) || p.flags.replace(/[gmyd]/g, '') !== '') return null;
  const out = noFirst();
  const r = firstOf(p.source, 1, out);
  return r === null || r.nullable ? null : out;
}

/**
 * Adds to `out` the first characters of the alternatives from `i` up to the `)` closing them
 * (or the end); returns where it stopped and whether an alternative may match nothing, or null for any.
 */
/**
 * For a `fromLineStart` pattern that begins with a run of whitespace (`\s*`, `\s+`, or a class
 * of whitespace with `*` or `+`) followed by something that never starts with whitespace: the
 * characters that something may start with. A match then starts the rest at the first
 * character after the line start's whole run of whitespace (`\s`), so a line start where
 * that character is none of them is passed over. Null for any other pattern.
 */
export function afterSpace(p: RegExp): FirstChars | null {
  if (!fromLineStart(p) || p.flags.replace(/[gmyd]/g, '') !== '') return null;
  const lead = /^\^(?:\\s|\[(?:\\[stnrvf]| |\t)+\])[*+](?!\?)/.exec(p.source);
  if (lead === null) return null;
  const rest = noFirst();
  const r = firstOf(p.source, lead[0].length, rest);
  if (r === null || r.nullable || r.end < p.source.length) return null;
  const spaces = [9, 10, 11, 12, 13, 32, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];
  const anySpace =
    rest.space ||
    spaces.some((c) => rest.codes.has(c)) ||
    rest.ranges.some(([a, b]) => spaces.some((c) => c >= a && c <= b) || (a <= 0x200a && b >= 0x2000));
  return anySpace ? null : rest;
}

function firstOf(src: string, i: number, out: FirstChars): { end: number; nullable: boolean } | null {
  let nullable = false;
  // Whether the alternative being read may still be at its start (all it read so far may match nothing).
  let open = true;
  for (; i < src.length; i++) {
    const c = src[i] as string;
    if (c === '|') {
      if (open) nullable = true;
      open = true;
      continue;
    }
    if (c === ')') break;
    // One atom: what it may start with (added only while the alternative is open), and whether it may match nothing.
    let empty = false;
    if (c === '\\') {
      const e = src[++i] ?? '';
      if (e === 'b' || e === 'B') empty = true;
      else if (open && !addEscape(e, out)) return null;
    } else if (c === '[') {
      const end = classEnd(src, i);
      if (end < 0 || (open && (src[i + 1] === '^' || !addClass(src.slice(i + 1, end), out)))) return null;
      i = end;
    } else if (c === '(') {
      const look = /^\(\?<?[=!]/.exec(src.slice(i, i + 4));
      if (look && open) return null;
      const start = look
        ? i + look[0].length
        : src.startsWith('(?:', i)
          ? i + 3
          : src.startsWith('(?<', i)
            ? src.indexOf('>', i) + 1
            : i + 1;
      // Past the alternative's start, a group is only read to its end.
      const inner = firstOf(src, start, open ? out : noFirst());
      if (inner === null) {
        if (open) return null;
        // Not told, but past the start: only its end is needed.
        const close = groupEnd(src, i);
        if (close < 0) return null;
        i = close;
      } else {
        empty = inner.nullable;
        i = inner.end;
      }
    } else if (c === '$' || c === '^') {
      empty = true;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      return null; // a quantifier with nothing before it
    } else if (c === '.') {
      if (open) return null;
    } else if (open) {
      out.codes.add(c.charCodeAt(0));
    }
    // A quantifier after the atom: one that allows none lets the next atom start the match.
    const q = src[i + 1];
    if (q === '*' || q === '?' || (q === '{' && /^\{0[,}]/.test(src.slice(i + 1)))) empty = true;
    if (q === '{') {
      const close = src.indexOf('}', i + 1);
      if (close < 0) return null;
      i = close;
    } else if (q === '*' || q === '+' || q === '?') i++;
    if (src[i + 1] === '?') i++;
    if (!empty) open = false;
  }
  return { end: i, nullable: nullable || open };
}

const noFirst = (): FirstChars => ({ codes: new Set(), ranges: [], space: false, digit: false, word: false });

/** Where the group opening at `open` closes, or -1. */
function groupEnd(src: string, open: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') {
      i = classEnd(src, i);
      if (i < 0) return -1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

function addEscape(e: string, out: FirstChars): boolean {
  if (e === 's') out.space = true;
  else if (e === 'd') out.digit = true;
  else if (e === 'w') out.word = true;
  else if (e === 't' || e === 'n' || e === 'r' || e === 'v' || e === 'f')
    out.codes.add('\t\n\r\v\f'.charCodeAt('tnrvf'.indexOf(e)));
  else if (/^[^A-Za-z0-9]$/.test(e)) out.codes.add(e.charCodeAt(0));
  else return false;
  return true;
}

function addClass(inside: string, out: FirstChars): boolean {
  for (let i = 0; i < inside.length; i++) {
    const c = inside[i] as string;
    if (c === '\\') {
      if (!addEscape(inside[++i] ?? '', out)) return false;
    } else if (inside[i + 1] === '-' && i + 2 < inside.length && inside[i + 2] !== '\\') {
      out.ranges.push([c.charCodeAt(0), inside.charCodeAt(i + 2)]);
      i += 2;
    } else out.codes.add(c.charCodeAt(0));
  }
  return true;
}

/**
 * Finds which of the patterns match, window by window (`LogWindows`). A pattern from a line
 * start that crosses finitely many line breaks is walked line start by line start with one
 * sticky pattern made of all those not yet found (where it matches, each is tried on its own);
 * a line near a window's end is tried on the rest of the window and the text after it that
 * the pattern can reach. A pattern that crosses no line break, wherever it starts, is tried
 * on each window whole. Any other pattern is tried on the whole log at the end. A window
 * with another line terminator (`\r`, U+2028, U+2029: `^` and `$` match beside them too) is
 * not read this way: `otherBreaks` says so, and the caller checks the whole log the slow way.
 */
export class Detector {
  private readonly found = new Set<RegExp>();
  private pending: { p: RegExp; sticky: RegExp; first: FirstChars | null; rest: FirstChars | null }[];
  /**
   * For a line's first character (and, when it is whitespace, the first one after the run:
   * -1 at the end), the sticky pattern of those pending that may start there (null: none).
   * `ascii` holds them for the two characters below 128, in arrays indexed by `next + 1` (0 for
   * a character that is not whitespace); `other` for the rest. A line start costs a look in
   * an array: no key made, nothing allocated (a map's look-up cost a number a line).
   */
  private ascii: (RegExp | null | undefined)[][] = [];
  private other = new Map<number, Map<number, RegExp | null>>();
  private readonly within: { p: RegExp; re: RegExp; sticky: RegExp; lead: string }[];
  private readonly whole: RegExp[];
  /** The most line breaks a walked pattern crosses. */
  private readonly reach: number;
  /** A window held another line terminator. */
  otherBreaks = false;

  constructor(patterns: readonly RegExp[]) {
    const walked = patterns.filter((p) => fromLineStart(p) && Number.isFinite(lineCrossings(p)));
    this.pending = walked.map((p) => ({
      p,
      sticky: new RegExp(p.source, 'my'),
      first: firstChars(p),
      rest: afterSpace(p),
    }));
    this.reach = Math.max(0, ...walked.map(lineCrossings));
    const rest = patterns.filter((p) => !walked.includes(p));
    const inLine = (p: RegExp) => p.flags.replace(/[gyd]/g, '') === 'm' && lineCrossings(p) === 0;
    this.within = rest.filter(inLine).map((p) => {
      // A pattern opening with plain text is looked for by that text first (a string search skips).
      const lead = /^(?:[^\\^$.|?*+()[\]{}]|\\[^A-Za-z0-9])+/.exec(p.source)?.[0] ?? '';
      const text = lead.replace(/\\(.)/g, '$1');
      const followed = text.length >= 3 && !/[*+?{]/.test(p.source[lead.length] ?? '');
      return { p, re: new RegExp(p.source, 'm'), sticky: new RegExp(p.source, 'my'), lead: followed ? text : '' };
    });
    this.whole = rest.filter((p) => !inLine(p));
  }

  /**
   * The pending patterns a match starting with the character `c` may be of, as one sticky
   * pattern; when `c` is whitespace, `next` is the first character after the run of it (-1
   * at the end), which those beginning with such a run must start the rest with.
   */
  private startingWith(c: number, next: number): RegExp | null {
    if (c < 128 && next < 128) {
      let after = this.ascii[c];
      if (after === undefined) {
        after = [];
        this.ascii[c] = after;
      }
      const re = after[next + 1];
      if (re !== undefined) return re;
      const made = this.made(c, next);
      after[next + 1] = made;
      return made;
    }
    let after = this.other.get(c);
    if (after === undefined) {
      after = new Map();
      this.other.set(c, after);
    }
    let re = after.get(next);
    if (re === undefined) {
      re = this.made(c, next);
      after.set(next, re);
    }
    return re;
  }

  /** `startingWith`'s pattern, made from the pending patterns. */
  private made(c: number, next: number): RegExp | null {
    const some = this.pending.filter((x) =>
      x.rest !== null && isSpace(c) ? mayStartWith(x.rest, next) : mayStartWith(x.first, c),
    );
    return some.length === 0 ? null : new RegExp(some.map((x) => `(?:${x.p.source})`).join('|'), 'my');
  }

  /** True when the pattern matched in the windows read so far (or, after `finish`, in the log). */
  matched(p: RegExp): boolean {
    return this.found.has(p);
  }

  /** True when nothing is left to look for in the windows. */
  get done(): boolean {
    return this.pending.length === 0 && this.within.every((x) => this.found.has(x.p));
  }

  /** Reads window `w`; `after(n)` gives the text after it up to its nth line holding more than whitespace. */
  read(w: string, after: (n: number) => string, last: boolean): void {
    if (this.otherBreaks) return;
    if (w.includes('\r') || w.includes('\u2028') || w.includes('\u2029')) {
      this.otherBreaks = true;
      return;
    }
    for (const x of this.within) if (!this.found.has(x.p) && this.within1(x, w)) this.found.add(x.p);
    if (this.pending.length === 0) return;
    const tail = last || this.reach === 0 ? w.length : tailStart(w, this.reach);
    this.walk(w, 0, tail);
    if (tail < w.length && this.pending.length > 0) this.walk(w.slice(tail) + after(this.reach), 0, w.length - tail);
  }

  /**
   * Tries the line starts in [from, to) of `text`: at each, the pending patterns that may start
   * with its first character, together (where they match, each is tried on its own).
   */
  private walk(text: string, from: number, to: number): void {
    for (let at = from; at < to && this.pending.length > 0; ) {
      const c = text.charCodeAt(at);
      let next = 0;
      if (isSpace(c)) {
        SPACE_RUN.lastIndex = at;
        SPACE_RUN.test(text);
        next = SPACE_RUN.lastIndex < text.length ? text.charCodeAt(SPACE_RUN.lastIndex) : -1;
      }
      const any = this.startingWith(c, next);
      if (any !== null) {
        any.lastIndex = at;
        if (any.test(text)) {
          for (const x of this.pending) {
            x.sticky.lastIndex = at;
            if (x.sticky.test(text)) this.found.add(x.p);
          }
          this.pending = this.pending.filter((x) => !this.found.has(x.p));
          this.ascii = [];
          this.other.clear();
        }
      }
      const nl = text.indexOf('\n', at);
      if (nl < 0) break;
      at = nl + 1;
    }
  }

  /** Whether a pattern that crosses no line break matches in window `w`: where its opening text is, when it has one. */
  private within1(x: { re: RegExp; sticky: RegExp; lead: string }, w: string): boolean {
    if (x.lead === '') return x.re.test(w);
    for (let at = w.indexOf(x.lead); at >= 0; at = w.indexOf(x.lead, at + 1)) {
      x.sticky.lastIndex = at;
      if (x.sticky.test(w)) return true;
    }
    return false;
  }

  /** Tries the patterns left for the whole log, once every window is read. */
  finish(text: () => string): void {
    for (const p of this.whole)
      if (!this.found.has(p) && new RegExp(p.source, p.flags.replace(/[gy]/g, '')).test(text())) this.found.add(p);
  }
}

/**
 * Where the lines start that a pattern crossing `n` line breaks may read past the window
 * from: the start of the window's nth line from its end holding more than whitespace (0
 * when it has fewer). The window ends with a newline.
 */
function tailStart(w: string, n: number): number {
  let end = w.length - 1;
  for (let seen = 0; end > 0; ) {
    const start = w.lastIndexOf('\n', end - 1) + 1;
    if (/\S/.test(w.slice(start, end)) && ++seen === n) return start;
    end = start - 1;
  }
  return 0;
}

/** The patterns of the checks (each once). */
export function checkPatterns(checks: readonly LineCheck[]): RegExp[] {
  return [...new Set(checks.flatMap(patternsOf))];
}

/** Whether the check holds, its patterns' matches as `matched` says. */
export function checkHolds(check: LineCheck, matched: (p: RegExp) => boolean): boolean {
  return holds(check, matched);
}

export { isLineCheck };

/**
 * The checks among `checks` that hold for the log, in order; the same as calling each on
 * the log's (cleaned) text, read window by window (text given as a string is read as it is).
 */
export function checksHolding<T>(
  log: string | LogWindows,
  items: readonly T[],
  checkOf: (item: T) => (log: string) => boolean,
): T[] {
  const windows = typeof log === 'string' ? LogWindows.asIs(log) : log;
  const lined = items.map(checkOf).filter(isLineCheck);
  const detector = new Detector(checkPatterns(lined));
  for (let k = 0; k < windows.count && !detector.done && !detector.otherBreaks; k++)
    detector.read(windows.at(k) as string, (n) => windows.after(k, n), k === windows.count - 1);
  if (detector.otherBreaks) return items.filter((i) => checkOf(i)(windows.text()));
  detector.finish(() => windows.text());
  return items.filter((i) => {
    const check = checkOf(i);
    return isLineCheck(check) ? holds(check, (p) => detector.matched(p)) : check(windows.text());
  });
}
