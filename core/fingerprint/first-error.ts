import type { LogWindows } from './log.js';
import { RUNNERS, type Runner } from './runners/index.js';

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

/** A line of a log read in windows: window `k`, starting at `at` in it. */
interface FoundLine {
  k: number;
  at: number;
  line: string;
  /** The line as E (normalised, and no banner). */
  error: string;
}

/**
 * Finds the first line of a window, from a line start on, that one of the patterns matches
 * (each tested on the line by itself, as a line is read everywhere else). Where lines are
 * searched first by a pattern run over the window, made of the patterns with the m flag, it
 * finds every line they match and more (a `\s` may reach the next line); each line it finds is
 * then tested by itself. A pattern with a lookaround (which could see past its line) is
 * tested on every line.
 */
export class LineFinder {
  private readonly search: RegExp[];
  private readonly everyLine: boolean;

  constructor(private readonly patterns: readonly RegExp[]) {
    const lookaround = (p: RegExp) => /\(\?<?[=!]/.test(p.source);
    const ownFlags = (p: RegExp) => p.flags.replace(/[gmyd]/g, '');
    const alone = (p: RegExp) => /\\[1-9]|\\k<|\(\?<(?![=!])/.test(p.source);
    this.everyLine = patterns.some(lookaround);
    const searched = patterns.filter((p) => !lookaround(p));
    // Patterns with the same flags and no group names or back references are searched for together.
    const byFlags = new Map<string, string[]>();
    const search: RegExp[] = [];
    for (const p of searched) {
      if (alone(p)) search.push(new RegExp(p.source, `${ownFlags(p)}gm`));
      else byFlags.set(ownFlags(p), [...(byFlags.get(ownFlags(p)) ?? []), `(?:${p.source})`]);
    }
    for (const [flags, sources] of byFlags) search.push(new RegExp(sources.join('|'), `${flags}gm`));
    this.search = search;
  }

  /** The first line starting in [from, to) of `w` (`from` a line start) that a pattern matches, or null. */
  next(w: string, from: number, to: number): { at: number; line: string } | null {
    for (let pos = from; pos < to; ) {
      let hit = this.everyLine ? pos : Number.POSITIVE_INFINITY;
      for (const re of this.search) {
        if (hit === pos) break;
        re.lastIndex = pos;
        const m = re.exec(w);
        if (m !== null && m.index < hit) hit = m.index;
      }
      if (hit === Number.POSITIVE_INFINITY) return null;
      // The line holding the hit (a newline there ends that line).
      const at = hit === 0 ? 0 : w.lastIndexOf('\n', hit - 1) + 1;
      if (at >= to) return null;
      const nl = w.indexOf('\n', at);
      const line = w.slice(at, nl < 0 ? w.length : nl);
      if (this.patterns.some((p) => p.test(line))) return { at, line };
      if (nl < 0) return null;
      pos = nl + 1;
    }
    return null;
  }
}

/**
 * E, found while a log is read window by window (read.ts) and finished once the runners it
 * looks like are known. The first error is the first line an error pattern of one of those
 * runners matches and that is no banner; as the windows are read, the lines are searched with
 * the patterns of the runners found so far (they are all among those at the end), until a line
 * is found. At the end, the lines before it that were not searched with a runner's patterns
 * (those before the window the runner was found in: all of them when none was found and every
 * runner is asked) are searched with them; without any, the first line naming an error by
 * keyword that is no banner, else the first banner.
 */
export class FirstErrorSearch {
  private found: FoundLine | null = null;
  /** The window each runner's patterns were searched from. */
  private readonly since = new Map<Runner, number>();
  private finder: LineFinder | null = null;
  private readonly bannerList: readonly RegExp[];

  constructor(private readonly runners: readonly Runner[] = RUNNERS) {
    this.bannerList = runners === RUNNERS ? ALL_BANNERS : banners(runners);
  }

  /** The line as E: normalised, or null when that is empty or a banner. */
  private specific(line: string): string | null {
    const e = normaliseError(line);
    return e !== '' && !this.bannerList.some((re) => re.test(e)) ? e : null;
  }

  /** The first line in [0, to) of window `k` the finder finds that is specific. */
  private first(finder: LineFinder, w: string, k: number, to: number): FoundLine | null {
    for (let pos = 0; pos < to; ) {
      const hit = finder.next(w, pos, to);
      if (hit === null) return null;
      const error = this.specific(hit.line);
      if (error !== null) return { k, at: hit.at, line: hit.line, error };
      pos = hit.at + hit.line.length + 1;
    }
    return null;
  }

  /** Reads window `k`, `detected` the runners the log looks like in the windows up to it (registry order). */
  read(k: number, w: string, detected: readonly Runner[]): void {
    let changed = false;
    for (const r of detected) {
      if (this.since.has(r)) continue;
      this.since.set(r, k);
      changed = true;
    }
    if (this.found !== null || detected.length === 0) return;
    if (changed || this.finder === null) this.finder = new LineFinder(detected.flatMap((r) => r.errorLine ?? []));
    this.found = this.first(this.finder, w, k, w.length);
  }

  /**
   * E, once every window is read: `detected` the runners the log looks like. `searched`
   * false discards what the windows gave (the log was detected another way than they were read).
   */
  finish(windows: LogWindows, detected: readonly Runner[], searched = true): string {
    if (!searched) {
      this.found = null;
      this.since.clear();
    }
    const asked = detected.length > 0 ? detected : this.runners;
    const last = this.found?.k ?? windows.count - 1;
    let key = '';
    let finder: LineFinder | null = null;
    for (let k = 0; k <= last; k++) {
      const unread = asked.filter((r) => k < (this.since.get(r) ?? Number.POSITIVE_INFINITY) && r.errorLine?.length);
      if (unread.length === 0) continue;
      const names = unread.map((r) => r.name).join('\n');
      if (names !== key) {
        key = names;
        finder = new LineFinder(unread.flatMap((r) => r.errorLine ?? []));
      }
      const w = windows.at(k) as string;
      const earlier = this.first(finder as LineFinder, w, k, this.found?.k === k ? this.found.at : w.length);
      if (earlier !== null) {
        this.found = earlier;
        break;
      }
    }
    const found = this.found;
    if (found !== null) {
      const runner = asked.find((r) => r.errorLine?.some((re) => re.test(found.line)));
      if (!runner?.errorContinues?.some((re) => re.test(found.line))) return found.error;
      const after: string[] = [];
      for (const line of windows.linesAfter(found.k, found.at)) {
        if (after.length === CONTINUATION_LINES + DIFF_EXTRA) break;
        after.push(line);
      }
      return normaliseError(`${found.line} ${continuation(after)}`.trim());
    }
    let firstBanner: string | null = null;
    const keyword = new LineFinder([ERROR_LINE]);
    for (let k = 0; k < windows.count; k++) {
      const w = windows.at(k) as string;
      for (let pos = 0; pos < w.length; ) {
        const hit = keyword.next(w, pos, w.length);
        if (hit === null) break;
        const e = this.specific(hit.line);
        if (e !== null) return e;
        firstBanner ??= normaliseError(hit.line);
        pos = hit.at + hit.line.length + 1;
      }
    }
    return firstBanner ?? '';
  }
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
