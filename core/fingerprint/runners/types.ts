/**
 * What one test runner family tells the fingerprint about its output. Each
 * family lives in its own file under core/fingerprint/runners/ and is listed
 * once in RUNNERS (index.ts); nothing else in core/fingerprint names a runner.
 *
 * All functions and patterns see the cleaned log (colour codes and carriage
 * returns removed, see log.ts), never the raw bytes.
 */
export interface Runner {
  /** Short name, for `chalk doctor` and test tables (`mocha`, `pytest`, ...). */
  name: string;
  /** True when the log looks like this runner's output. Cheap: it runs on every failed rubric. */
  detect(log: string): boolean;
  /**
   * The failing test IDs the output names, in output order (repeats allowed,
   * the fingerprint sorts and removes them), or null when this runner's
   * output names none it can read.
   */
  failingTests(log: string): string[] | null;
  /**
   * Lines that name a specific error in this runner's output, tested against
   * each cleaned line as printed (indentation kept, e.g. pytest's `E   `).
   * The first line any detected runner's pattern matches is the first error.
   */
  errorLine?: RegExp[];
  /**
   * Error lines (already matched by `errorLine`) that only introduce the
   * specifics on the next non-blank line, e.g. node's `AssertionError
   * [ERR_ASSERTION]: Expected values to be strictly equal:` before `6 !== 7`:
   * the first error is then both lines, joined by a space.
   */
  errorContinues?: RegExp[];
  /**
   * Lines that only say that something failed (section headers, summaries),
   * tested against the normalised line (spacing collapsed, times `<time>`,
   * durations `<d>`, line numbers gone): never the first error.
   */
  banner?: RegExp[];
  /** How to make this runner write a report CHALK_TEST_REPORT can read, one line (for `chalk doctor`). */
  reportHint: string;
  /** How the flaky rerun runs only the failing tests (core/fingerprint/rerun.ts); absent: the rubric runs whole. */
  select?: Select;
}

/**
 * Running some failing tests by themselves: the rubric command's last step is
 * kept, its positional arguments (paths, packages, filters) replaced by the
 * selection. The IDs are this runner's own (`failingTests` of its output).
 */
export interface Select {
  /** The words that start this runner's command, after env assignments and launchers (`npx`, `uv run`, `python -m`). */
  commands: readonly (readonly string[])[];
  /** Also through a package script (`npm test`, `yarn test`, `npm run X`): the selection then goes after the script. */
  packageScripts?: boolean;
  /** Options that take the next word as their value, so it is not a positional argument. */
  valueOptions?: readonly string[];
  /**
   * The words that take the positional arguments' place (`args`; the runner may keep them) and
   * those after a `--` (`after`), for these IDs; null when they cannot all be selected.
   */
  args(o: SelectInput): { args: string[]; after?: string[] } | null;
}

export interface SelectInput {
  /** The failing tests, as the loop's fingerprint has them. */
  ids: readonly string[];
  /** The IDs came from the test report (`CHALK_TEST_REPORT`), in its format; else from this runner's output. */
  report: boolean;
  /** The command's positional arguments for this runner (paths, packages, filters, a subcommand). */
  positionals: readonly string[];
}
