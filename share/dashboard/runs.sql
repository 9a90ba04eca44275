-- The report card's per-run facts for a window: the verdict ledger's runs and whether lessons helped.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- Each run's facts are report_runs' (schema version 10, made from the run's loops whenever one is
-- written); a run whose loops began before the window and go on inside it is made from its loops in the
-- window (chalk_report_runs_of), as the rows alone would give. The ledger's runs come grouped by their
-- facts (core/report/ledger.ts's runFacts; ledgerOf adds them up). tests/fixtures/dashboard-raw/runs.sql
-- is the same from the rows alone.
WITH w AS (
  SELECT now() - make_interval(days => $1::int) AS s
), straddling AS (
  SELECT COALESCE(array_agg(DISTINCT run_id), '{}') AS ids FROM report_runs p, w
  WHERE p.first_at < w.s AND p.last_at >= w.s AND ($2::text IS NULL OR p.repo = $2::text)
), p AS (
  SELECT p.* FROM report_runs p, w
  WHERE p.first_at >= w.s AND ($2::text IS NULL OR p.repo = $2::text)
  UNION ALL SELECT f.* FROM straddling, w, chalk_report_runs_of(straddling.ids, w.s) f
  WHERE f.first_at IS NOT NULL AND ($2::text IS NULL OR f.repo = $2::text)
), retries AS (
  SELECT t.prev_key, t.given, t.passed FROM report_retries t JOIN report_runs p USING (repo, run_id), w
  WHERE p.first_at >= w.s AND ($2::text IS NULL OR p.repo = $2::text)
  UNION ALL SELECT t.prev_key, t.given, t.passed FROM straddling, w, chalk_report_retries_of(straddling.ids, w.s) t
  WHERE $2::text IS NULL OR t.repo = $2::text
), both_keys AS (
  SELECT prev_key FROM retries WHERE prev_key IS NOT NULL
  GROUP BY prev_key HAVING bool_or(given) AND bool_or(NOT given)
)
SELECT json_build_object(
  -- Runs with a verdict, grouped by their facts: how many, and their no-progress spend and would-be savings.
  'ledger', (SELECT COALESCE(json_agg(json_build_object(
      'mode', mode, 'detained', detained, 'judged', judged, 'blocker_only', blocker_only,
      'stop_verdict', stop_verdict, 'false_stop', false_stop, 'improving', improving,
      'runs', runs, 'np_cost', np_cost, 'saved', saved) ORDER BY mode, detained, judged, blocker_only, stop_verdict,
      false_stop, improving), '[]'::json)
    FROM (SELECT COALESCE(p.mode, 'unknown') AS mode, x.run_id IS NOT NULL AS detained,
                 judged, blocker_only, stop_verdict, false_stop, improving,
                 count(*) AS runs, sum(np_cost) AS np_cost, sum(saved) AS saved
          -- Detained: the run opened a lesson (one hash of the lessons' run ids, not a probe per run).
          FROM p LEFT JOIN (SELECT DISTINCT run_id FROM lessons WHERE run_id IS NOT NULL) x ON x.run_id = p.run_id
          WHERE has_verdict GROUP BY 1, 2, 3, 4, 5, 6, 7) g),
  'verdictless_runs', (SELECT count(*) FROM p WHERE NOT has_verdict AND any_stall),
  'lessons_help', json_build_object(
    'all', (SELECT json_build_object(
        'with', COALESCE(sum(help_with), 0), 'with_passed', COALESCE(sum(help_with_passed), 0),
        'without', COALESCE(sum(help_without), 0), 'without_passed', COALESCE(sum(help_without_passed), 0))
      FROM p),
    'same_failure', (SELECT json_build_object(
        'with', count(*) FILTER (WHERE given), 'with_passed', count(*) FILTER (WHERE given AND passed),
        'without', count(*) FILTER (WHERE NOT given), 'without_passed', count(*) FILTER (WHERE NOT given AND passed),
        'failures', (SELECT count(*) FROM both_keys))
      FROM retries WHERE prev_key IN (SELECT prev_key FROM both_keys)))
) AS doc
