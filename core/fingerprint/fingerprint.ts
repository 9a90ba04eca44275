import { createHash } from 'node:crypto';
import { isGenericError } from './first-error.js';
import type { LogInput } from './log.js';
import { readLog, testsFromOutput } from './read.js';
import { testsFromReport } from './report.js';

/**
 * A loop's fingerprint: what its rubric run reduces to, so that two loops can
 * be compared.
 * - T `tests`: the failing test IDs, sorted (byte order) and unique; null is
 *   UNKNOWN (no IDs found), never "zero failures".
 * - E `firstError`: the normalised first error line, '' when none.
 * - D `treeId`: the git tree of the sandbox's working tree, '' when git could
 *   not say (an empty D is never "unchanged").
 *
 * A passing rubric records D only (`rubric: 'passed'`).
 */
export interface Fingerprint {
  rubric: 'failed' | 'passed';
  tests: string[] | null;
  firstError: string;
  /** E is only a runner's banner (`FAIL`, `=== FAILURES ===`, ...). */
  generic: boolean;
  treeId: string;
  /** sha256 of T; null when T is UNKNOWN. */
  testsHash: string | null;
  /** How many tests fail; null when T is UNKNOWN. */
  failing: number | null;
  /** The lesson fingerprint, sha256 of T and E; set only when T is known or E is specific. */
  hash: string | null;
}

/** What T is written as when no test IDs were found. */
export const UNKNOWN = 'UNKNOWN';

/** What the loop's line and `chalk why` say when a failed rubric names no test Chalk can read. */
export const UNKNOWN_TESTS_LINE = 'failing tests: unknown (set CHALK_TEST_REPORT, see chalk doctor)';

export interface FailedRubric {
  /** The rubric's combined output (`io/rubric.log`): its bytes as the host kept them, or text. */
  log: LogInput;
  /** The test report's content when `CHALK_TEST_REPORT` is set and the rubric wrote one; null otherwise. */
  report: string | null;
  /** The tree ID as the sandbox printed it (validated here). */
  treeId: string;
  /** Where the repository lives in the sandbox, for jest's absolute file names. */
  repoDir?: string;
}

/** A UTF-16 surrogate: a character above U+FFFF, or half of one. */
const SURROGATE = /[\ud800-\udfff]/;

/** Sorted in byte order (as `LC_ALL=C sort -u`), duplicates removed. */
export function sortTests(ids: Iterable<string>): string[] {
  const unique = [...new Set(ids)];
  // Without surrogates, JavaScript's order (UTF-16 code units) is code point order, which is
  // UTF-8's byte order; with one, each ID's bytes are made once, not once per comparison.
  if (!unique.some((id) => SURROGATE.test(id))) return unique.sort();
  const keyed = unique.map((id) => ({ id, bytes: Buffer.from(id, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  return keyed.map((k) => k.id);
}

/**
 * `sortTests` of an array the caller gives up (sorted in place): without surrogates, sorted
 * first and each run of equal IDs then kept once (no set of them all: T from a log naming
 * each failing test twice, as pytest's `-v` progress and summary do, is most of its cost).
 */
function sortTestsIn(ids: string[]): string[] {
  // Two strings with different surrogates may have the same bytes (each half alone is U+FFFD
  // in UTF-8): equal IDs would not have to be next to each other in byte order.
  if (ids.some((id) => SURROGATE.test(id))) return sortTests(ids);
  ids.sort();
  let n = 0;
  for (const id of ids) if (n === 0 || id !== ids[n - 1]) ids[n++] = id;
  ids.length = n;
  return ids;
}

/** A git tree ID (SHA-1 or SHA-256), or '' for anything else. */
export function validTreeId(text: string): string {
  const t = text.trim();
  return /^[0-9a-f]{40,64}$/.test(t) ? t : '';
}

/**
 * T: from the report when there is a non-empty one (and only from it), else
 * from the runner's output. No IDs means UNKNOWN (null).
 */
export function failingTests(log: LogInput, report: string | null, repoDir?: string): string[] | null {
  return knownTests(report !== null && report !== '' ? (testsFromReport(report, repoDir) ?? []) : testsFromOutput(log));
}

/** T from the IDs read: sorted, or null (UNKNOWN) for none. */
function knownTests(ids: Iterable<string>): string[] | null {
  return known(sortTests(ids));
}

/** T from sorted IDs: null (UNKNOWN) for none. */
const known = (sorted: string[]): string[] | null => (sorted.length > 0 ? sorted : null);

/** T as text: one ID per line, or `UNKNOWN`. */
export function testsText(tests: string[] | null): string {
  return tests === null ? UNKNOWN : tests.join('\n');
}

/**
 * The fingerprint of a failed rubric run: `failingTests` and `firstError` of the log, read
 * in one pass for both (read.ts: window by window, its runners detected as it goes).
 */
export function fingerprintFailure(input: FailedRubric): Fingerprint {
  const fromReport = input.report !== null && input.report !== '';
  const read = readLog(input.log, undefined, { ids: !fromReport, error: true });
  const tests = fromReport
    ? knownTests(testsFromReport(input.report as string, input.repoDir) ?? [])
    : known(sortTestsIn(read.ids));
  return failedFingerprint(tests, read.firstError, input.treeId);
}

/** How many IDs of T are hashed together (`failedFingerprint`). */
const HASHED_AT_ONCE = 1000;

/** The fingerprint of a failed run from its T (sorted, or null), its E and D. */
export function failedFingerprint(tests: string[] | null, error: string, treeId: string): Fingerprint {
  const generic = error !== '' && isGenericError(error);
  const identifies = tests !== null || (error !== '' && !generic);
  // T's text is hashed once: both hashes start with it (a copy of the hash takes the second
  // ending). It is hashed a thousand IDs at a time, never made whole: thousands of IDs make
  // megabytes of text, and a string that large is fresh memory each time.
  const ofT = createHash('sha256');
  if (tests === null) ofT.update(UNKNOWN, 'utf8');
  else
    for (let i = 0; i < tests.length; i += HASHED_AT_ONCE) {
      const part = tests.slice(i, i + HASHED_AT_ONCE).join('\n');
      ofT.update(i === 0 ? part : `\n${part}`, 'utf8');
    }
  const hash = identifies ? ofT.copy().update(`\n\n${error}\n`, 'utf8').digest('hex') : null;
  return {
    rubric: 'failed',
    tests,
    firstError: error,
    generic,
    treeId: validTreeId(treeId),
    testsHash: tests === null ? null : ofT.update('\n').digest('hex'),
    failing: tests === null ? null : tests.length,
    hash,
  };
}

/** The fingerprint of a passed rubric run: D only. */
export function fingerprintPass(treeId: string): Fingerprint {
  return {
    rubric: 'passed',
    tests: null,
    firstError: '',
    generic: false,
    treeId: validTreeId(treeId),
    testsHash: null,
    failing: null,
    hash: null,
  };
}
