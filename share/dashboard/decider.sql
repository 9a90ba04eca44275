-- The report card's decider facts: what it was asked in the window, and every confident
-- shadow answer of all history (the calibration gate judges over all of it).
-- $1: the window in days; $2: the repository, or NULL for every repository.
WITH d AS (
  SELECT d.*, c.repo, c.loop AS call_loop,
         d.created_at >= now() - make_interval(days => $1::int) AS in_window
  FROM decisions d LEFT JOIN runs c ON c.id = d.call_id
  WHERE $2::text IS NULL OR c.repo = $2::text
), w AS (
  SELECT * FROM d WHERE in_window
)
SELECT json_build_object(
  'asked', (SELECT count(*) FROM w),
  'answered', (SELECT count(*) FROM w WHERE answer IS NOT NULL),
  'acted', (SELECT count(*) FROM w WHERE acted),
  'median_latency_ms', (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM w WHERE answer IS NOT NULL AND latency_ms IS NOT NULL),
  'by_kind', (SELECT COALESCE(json_object_agg(kind, n), '{}'::json) FROM (SELECT kind, count(*) AS n FROM w GROUP BY kind) k),
  'by_mode', (SELECT COALESCE(json_object_agg(mode, n), '{}'::json) FROM (SELECT mode, count(*) AS n FROM w GROUP BY mode) m),
  'no_answer', (SELECT COALESCE(json_agg(json_build_object('error', error, 'calls', n) ORDER BY n DESC, error), '[]'::json)
    FROM (SELECT COALESCE(error, 'no answer') AS error, count(*) AS n FROM w WHERE answer IS NULL GROUP BY 1) e),
  'models', (SELECT COALESCE(json_agg(json_build_object('url', url, 'model', model, 'asked', n) ORDER BY n DESC, url, model), '[]'::json)
    FROM (SELECT COALESCE(url, '') AS url, COALESCE(model, '') AS model, count(*) AS n FROM w GROUP BY 1, 2) m),
  -- Stuck answers with a confidence: whether a later loop of the run progressed, and whether it was detained.
  'answers', (SELECT COALESCE(json_agg(json_build_object(
      'url', COALESCE(url, ''), 'model', COALESCE(model, ''), 'run', run_id, 'mode', mode,
      'answer', answer, 'confidence', confidence, 'in_window', in_window,
      'later_progress', EXISTS (SELECT 1 FROM runs r2 WHERE r2.run_id = a.run_id AND r2.progressed
                                  AND (CASE WHEN a.call_loop IS NOT NULL THEN r2.loop > a.call_loop ELSE r2.created_at > a.created_at END)),
      'detained', EXISTS (SELECT 1 FROM lessons x WHERE x.run_id = a.run_id)) ORDER BY a.created_at, a.id), '[]'::json)
    FROM d a WHERE a.kind = 'stuck' AND a.answer IS NOT NULL AND a.confidence IS NOT NULL AND a.run_id IS NOT NULL)
) AS doc
