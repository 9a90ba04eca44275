-- The stuck answers the report card judges, with what their judgement needs (stuck-answers.sql's
-- facts), in the least the card needs: every shadow "yes" of all history (the calibration gate counts
-- each run by its first), the window's other answers grouped by what the confidence bands count, and
-- every (URL, model) that answered (each has a row in the gate's table).
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- A call's loop and repository are the decision's own columns (call_loop, call_repo: schema version 12);
-- a run's latest progressing loop is report_runs' (over its folded rows) or a pending row's.
WITH a0 AS (
  SELECT d.id, d.created_at, COALESCE(d.url, '') AS url, COALESCE(d.model, '') AS model, d.run_id, d.mode, d.answer,
         d.confidence, d.call_loop, d.call_repo, d.created_at >= now() - make_interval(days => $1::int) AS in_window,
         d.mode = 'shadow' AND d.answer = 'yes' AS gated
  FROM decisions d
  WHERE d.kind = 'stuck' AND d.answer IS NOT NULL AND d.confidence IS NOT NULL AND d.run_id IS NOT NULL
), a AS (
  SELECT * FROM a0 WHERE $2::text IS NULL OR call_repo = $2::text
), g AS (
  -- Each run's latest progress, by one hash of the runs (not a probe per answer).
  SELECT run_id, max(progress_loop) AS progress_loop, max(progress_at) AS progress_at FROM (
    SELECT run_id, progress_loop, progress_at FROM report_runs
    UNION ALL SELECT run_id, CASE WHEN progressed THEN loop END, CASE WHEN progressed THEN created_at END
    FROM chalk_report_pending() WHERE run_id IS NOT NULL) x
  GROUP BY 1
), j AS (
  SELECT a.*,
    COALESCE(CASE WHEN a.call_loop IS NOT NULL THEN g.progress_loop > a.call_loop ELSE g.progress_at > a.created_at END,
             false) AS later_progress,
    x.run_id IS NOT NULL AS detained
  FROM a LEFT JOIN g ON g.run_id = a.run_id
  LEFT JOIN (SELECT DISTINCT run_id FROM lessons WHERE run_id IS NOT NULL) x ON x.run_id = a.run_id
  WHERE a.gated OR a.in_window
)
SELECT json_build_object(
  'keys', (SELECT COALESCE(json_agg(json_build_array(url, model)), '[]'::json) FROM (
      SELECT DISTINCT url, model FROM a) k),
  -- [url, model, run, confidence, in window, later progress, detained], oldest first.
  'gated', (SELECT COALESCE(json_agg(json_build_array(url, model, run_id, confidence, in_window, later_progress, detained)
      ORDER BY created_at, id), '[]'::json) FROM j WHERE gated),
  -- [url, model, mode, answer, confidence, later progress, detained, answers]
  'others', (SELECT COALESCE(json_agg(json_build_array(url, model, mode, answer, confidence, later_progress, detained, n)), '[]'::json)
    FROM (SELECT url, model, mode, answer, confidence, later_progress, detained, count(*) AS n
          FROM j WHERE in_window AND NOT gated GROUP BY 1, 2, 3, 4, 5, 6, 7) o)
) AS doc
