import { FirstErrorSearch } from './first-error.js';
import { cleanLog, forLinesHolding, type LogInput, LogWindows, linesHolding } from './log.js';
import { checkHolds, checkPatterns, Detector, isLineCheck, type LineCheck } from './runners/detect.js';
import { RUNNERS, type Runner } from './runners/index.js';
import { idLinesOf, idOfLine } from './runners/lines.js';
import { OUTPUT_PATTERNS } from './tests-from-output.js';

/**
 * One pass over a rubric log, window by window (`LogWindows`: a log of bytes is never one
 * string): the runners it looks like, the failing test IDs they name, and E. Each window is
 * read once for all three:
 * - the runners' detect patterns (runners/detect.ts, `Detector`);
 * - E's search, with the patterns of the runners found so far (first-error.ts, `FirstErrorSearch`);
 * - the IDs of the runners that say which lines hold them (`idsOnLines`: pytest's `FAILED` and
 *   `ERROR` lines) and OUTPUT_PATTERNS', collected before it is known whether the runner is there.
 * At the end, the IDs of a runner found that reads the log whole (`failingTests`) are read from
 * the whole cleaned log, made then; E's search finishes on the windows it still needs.
 */
export interface LogReading {
  /** The runners the log looks like, registry order. */
  detected: Runner[];
  /** Every failing test ID the output names, runner by runner in output order, repeats included. */
  ids: string[];
  /** E: normalised, '' when no line names an error. */
  firstError: string;
}

/** What a pass reads: the IDs, E, or both. */
export interface Reading {
  ids: boolean;
  error: boolean;
}

/**
 * IDs read window by window, copied out of the window when it is read (joined by newlines,
 * which no ID holds: each is read from one line, and one more newline ends each window's): an
 * ID kept as it was read would keep its whole window (V8 slices strings of 13 characters and
 * more), and a copy of each would leave the garbage collector as many strings to move as there
 * are IDs.
 */
class IdsRead {
  private readonly done: string[] = [];
  private window: string[] = [];

  add(id: string): void {
    this.window.push(id);
  }

  /** The window's IDs are all read. */
  close(): void {
    if (this.window.length === 0) return;
    // The empty last one makes the join a new string even for one ID (of one, join gives it back).
    this.window.push('');
    this.done.push(this.window.join('\n'));
    this.window = [];
  }

  /** Every ID, in the order read: sliced from the windows' copies, never joined into one. */
  all(): string[] {
    this.close();
    const ids: string[] = [];
    for (const copied of this.done)
      for (let at = 0; at < copied.length; ) {
        const nl = copied.indexOf('\n', at);
        ids.push(copied.slice(at, nl));
        at = nl + 1;
      }
    return ids;
  }
}

export function readLog(
  log: LogInput | LogWindows,
  runners: readonly Runner[] = RUNNERS,
  want: Reading = { ids: true, error: true },
): LogReading {
  const windows = log instanceof LogWindows ? log : LogWindows.of(log);
  const lined = runners.filter((r) => isLineCheck(r.detect));
  const detector = new Detector(checkPatterns(lined.map((r) => r.detect as LineCheck)));
  const errors = want.error ? new FirstErrorSearch(runners) : null;
  const byLines = want.ids
    ? runners.flatMap((r) => {
        const lines = idLinesOf(r.failingTests);
        return lines ? [{ runner: r, lines, ids: new IdsRead() }] : [];
      })
    : [];
  const outputWords = OUTPUT_PATTERNS.map((p) => p.word);
  const outputIds = new IdsRead();
  const seen = new Set<Runner>();
  for (let k = 0; k < windows.count; k++) {
    const w = windows.at(k) as string;
    detector.read(w, (n) => windows.after(k, n), k === windows.count - 1);
    if (!detector.otherBreaks)
      for (const r of lined)
        if (!seen.has(r) && checkHolds(r.detect as LineCheck, (p) => detector.matched(p))) seen.add(r);
    errors?.read(
      k,
      w,
      runners.filter((r) => seen.has(r)),
    );
    // A runner's `failingTests` cleans the log it is given once more (as `idsFromLines` does):
    // a colour code removing another one made (ESC [1 ESC[3m t) goes then, so here too.
    const again = byLines.length > 0 ? cleanLog(w) : w;
    for (const x of byLines) {
      forLinesHolding(again, x.lines.words, (line) => {
        const id = idOfLine(line, x.lines.patterns);
        if (id !== null) x.ids.add(id);
      });
      x.ids.close();
    }
    if (want.ids) {
      for (const line of linesHolding(w, outputWords)) {
        for (const { pattern } of OUTPUT_PATTERNS) {
          const m = pattern.exec(line);
          if (m?.[1] !== undefined) {
            outputIds.add(m[1]);
            break;
          }
        }
      }
      outputIds.close();
    }
  }
  let detected: Runner[];
  if (detector.otherBreaks) detected = runners.filter((r) => r.detect(windows.text()));
  else {
    detector.finish(() => windows.text());
    detected = runners.filter((r) => {
      const check = r.detect;
      return isLineCheck(check) ? checkHolds(check, (p) => detector.matched(p)) : check(windows.text());
    });
  }
  let ids: string[] = [];
  if (want.ids) {
    const lists = detected.map(
      (r) => byLines.find((x) => x.runner === r)?.ids.all() ?? r.failingTests(windows.text()) ?? [],
    );
    lists.push(outputIds.all());
    const some = lists.filter((l) => l.length > 0);
    if (some.length === 1) ids = some[0] as string[];
    // A loop, not push(...ids): a log may name more failing tests than a call takes arguments.
    else for (const l of some) for (const id of l) ids.push(id);
  }
  const firstError = errors ? errors.finish(windows, detected, !detector.otherBreaks) : '';
  return { detected, ids, firstError };
}

/** Every failing test ID the output names, runner by runner in output order, repeats included. */
export function testsFromOutput(log: LogInput): string[] {
  return readLog(log, RUNNERS, { ids: true, error: false }).ids;
}

/** E for a rubric log: normalised, or '' when no line names an error. */
export function firstError(log: LogInput, runners: readonly Runner[] = RUNNERS): string {
  return readLog(log, runners, { ids: false, error: true }).firstError;
}
