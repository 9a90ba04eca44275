-- Every stuck answer with a confidence, of all history, oldest first, with the facts its
-- judgement needs (core/decision/calibration.ts judges them at read time): whether a later loop
-- of the run progressed, and whether the run was detained (it opened a lesson).
-- Read by the report card and by a run in CHALK_DECIDER=on (Store.decisions.stuckAnswers).
-- $1: the report's window in days (for in_window); $2: the repository, or NULL for every repository.
SELECT COALESCE(json_agg(json_build_object(
    'url', COALESCE(a.url, ''), 'model', COALESCE(a.model, ''), 'run', a.run_id, 'mode', a.mode,
    'answer', a.answer, 'confidence', a.confidence, 'in_window', a.in_window,
    'later_progress', EXISTS (SELECT 1 FROM runs r2 WHERE r2.run_id = a.run_id AND r2.progressed
                                AND (CASE WHEN a.call_loop IS NOT NULL THEN r2.loop > a.call_loop ELSE r2.created_at > a.created_at END)),
    'detained', EXISTS (SELECT 1 FROM lessons x WHERE x.run_id = a.run_id)) ORDER BY a.created_at, a.id), '[]'::json) AS doc
FROM (
  SELECT d.*, c.loop AS call_loop, d.created_at >= now() - make_interval(days => $1::int) AS in_window
  FROM decisions d LEFT JOIN runs c ON c.id = d.call_id
  WHERE ($2::text IS NULL OR c.repo = $2::text)
    AND d.kind = 'stuck' AND d.answer IS NOT NULL AND d.confidence IS NOT NULL AND d.run_id IS NOT NULL
) a
