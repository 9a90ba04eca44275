/**
 * What `chalk db copy` copies, declared once: every table of the schema is either copied (with
 * the columns that point at another copied table's rows, whose ids are mapped on the way) or
 * named here as not copied, with why. tests/integration/store/db-copy.test.ts checks that a new
 * database has no table outside the two lists, so a table added to schema.sql needs a decision.
 */
export interface CopiedTable {
  table: string;
  /** Column -> the copied table whose `id` it holds (mapped to that row's id in the target). */
  refs: Readonly<Record<string, string>>;
}

/** Parents before children, so a child's references are found in the target. */
export const COPIED: readonly CopiedTable[] = [
  { table: 'runs', refs: {} },
  { table: 'events', refs: {} },
  { table: 'lessons', refs: {} },
  { table: 'lesson_recalls', refs: { call_id: 'runs', lesson_id: 'lessons' } },
  { table: 'decisions', refs: { call_id: 'runs', lesson_id: 'lessons' } },
];

export const NOT_COPIED: Readonly<Record<string, string>> = {
  chalk_schema: "the database's own version and origin",
  lesson_bits: "made from each lesson's text and flags by the target's own triggers",
  lesson_spec_anchors: "made from each lesson's text by the target's own triggers",
  report_calls: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_loops: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_tickets: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_tests: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_test_names: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_runs: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_retries: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_retry_keys: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_run_days: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_run_seen: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_test_totals: "the report card's rollup, made from the copied runs by the target's own triggers",
  report_pending: "the report card's rollup's list of rows to fold in, made by the target's own triggers",
};

/** Columns every copied table has that are not copied as they are: the key and the row's origin. */
export const IDENTITY_COLUMNS: ReadonlySet<string> = new Set(['id', 'origin', 'origin_id']);
