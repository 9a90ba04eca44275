-- The report card's decider facts: what it was asked in the window. The stuck answers the
-- calibration gate judges (all history) are stuck-answers.sql's, which the run's `on` mode reads too.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- The window's decisions by their time (decisions_created_idx); a decision's repository is its call's
-- (decisions.call_repo, schema version 12).
WITH w AS (
  SELECT d.kind, d.mode, d.answer, d.acted, d.latency_ms, d.error, d.url, d.model FROM decisions d
  WHERE d.created_at >= now() - make_interval(days => $1::int)
    AND ($2::text IS NULL OR d.call_repo = $2::text)
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
    FROM (SELECT COALESCE(url, '') AS url, COALESCE(model, '') AS model, count(*) AS n FROM w GROUP BY 1, 2) m)
) AS doc
