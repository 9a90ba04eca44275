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
 * The patterns (each `fromLineStart`) that match somewhere in the log. The log is walked
 * line start by line start with one sticky pattern made of all those not yet found; where
 * it matches, each is tried on its own. A match of any of them starts at a line start, and
 * the walk visits them in order, so each is found exactly when it matches at all.
 */
function foundFromLineStarts(log: string, patterns: readonly RegExp[]): Set<RegExp> {
  const found = new Set<RegExp>();
  let pending = patterns.map((p) => ({ p, sticky: new RegExp(p.source, 'my') }));
  const together = () => new RegExp(pending.map((x) => `(?:${x.p.source})`).join('|'), 'my');
  let any = together();
  for (let at = 0; pending.length > 0; ) {
    any.lastIndex = at;
    if (any.test(log)) {
      for (const x of pending) {
        x.sticky.lastIndex = at;
        if (x.sticky.test(log)) found.add(x.p);
      }
      pending = pending.filter((x) => !found.has(x.p));
      if (pending.length > 0) any = together();
    }
    const nl = log.indexOf('\n', at);
    if (nl < 0) break;
    at = nl + 1;
  }
  return found;
}

/**
 * The checks among `checks` that hold for the log, in order; the same as calling each.
 * A log with another line terminator (`\r`, U+2028, U+2029: `^` matches after them too)
 * is checked the slow way.
 */
export function checksHolding<T>(
  log: string,
  items: readonly T[],
  checkOf: (item: T) => (log: string) => boolean,
): T[] {
  const lined = items.map(checkOf).filter(isLineCheck);
  const otherBreak = log.includes('\r') || log.includes('\u2028') || log.includes('\u2029');
  if (otherBreak || lined.length === 0) return items.filter((i) => checkOf(i)(log));
  const all = [...new Set(lined.flatMap(patternsOf))];
  const found = foundFromLineStarts(log, all.filter(fromLineStart));
  const others = new Map(all.filter((p) => !fromLineStart(p)).map((p) => [p, p.test(log)]));
  const matched = (p: RegExp) => found.has(p) || others.get(p) === true;
  return items.filter((i) => {
    const check = checkOf(i);
    return isLineCheck(check) ? holds(check, matched) : check(log);
  });
}
