-- Every stuck answer with a confidence, of all history, oldest first, with the facts its
-- judgement needs (core/decision/calibration.ts judges them at read time): whether a later loop
-- of the run progressed, and whether the run was detained (it opened a lesson).
-- Read by the report card and by a run in CHALK_DECIDER=on (Store.decisions.stuckAnswers).
-- $1: the report's window in days (for in_window); $2: the repository, or NULL for every repository.
-- A later loop progressed when the run's latest progressing loop (report_runs, schema version 11: over
-- every folded row of the run, or a row not yet folded in) is after the answer's loop (decisions.call_loop,
-- schema version 12), or, for an answer without a call, after the answer.
-- tests/fixtures/dashboard-raw/stuck-answers.sql is the same from the rows alone.
WITH a AS (
  SELECT d.*, d.created_at >= now() - make_interval(days => $1::int) AS in_window
  FROM decisions d
  WHERE ($2::text IS NULL OR d.call_repo = $2::text)
    AND d.kind = 'stuck' AND d.answer IS NOT NULL AND d.confidence IS NOT NULL AND d.run_id IS NOT NULL
), g AS (
  SELECT run_id, max(progress_loop) AS progress_loop, max(progress_at) AS progress_at FROM (
    SELECT run_id, progress_loop, progress_at FROM report_runs
    UNION ALL SELECT run_id, CASE WHEN progressed THEN loop END, CASE WHEN progressed THEN created_at END
    FROM chalk_report_pending() WHERE run_id IS NOT NULL) x
  GROUP BY 1
)
SELECT COALESCE(json_agg(json_build_object(
    'url', COALESCE(a.url, ''), 'model', COALESCE(a.model, ''), 'run', a.run_id, 'mode', a.mode,
    'answer', a.answer, 'confidence', a.confidence, 'in_window', a.in_window,
    'later_progress', COALESCE(CASE WHEN a.call_loop IS NOT NULL THEN g.progress_loop > a.call_loop
                                    ELSE g.progress_at > a.created_at END, false),
    'detained', x.run_id IS NOT NULL) ORDER BY a.created_at, a.id), '[]'::json) AS doc
FROM a LEFT JOIN g ON g.run_id = a.run_id
LEFT JOIN (SELECT DISTINCT run_id FROM lessons WHERE run_id IS NOT NULL) x ON x.run_id = a.run_id
