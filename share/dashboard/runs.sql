-- The report card's per-run facts for a window: the verdict ledger's runs and whether lessons helped.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- Each run's facts are report_runs' (schema version 11, made from the run's loops whenever they are folded
-- in); a run whose loops began before the window and go on inside it, or that has rows not yet folded in
-- (report_pending), is made from its loops in the window (chalk_report_runs_of), as the rows alone would
-- give. The ledger's runs come grouped by their facts (core/report/ledger.ts's runFacts; ledgerOf adds
-- them up). The retries of the window's runs are report_retry_keys' days (schema version 12, by the day
-- of each run's first loop) less the stored retries of the runs made again, plus the stored retries of
-- the runs that began on the window's first partial day and the retries of the runs made again.
-- tests/fixtures/dashboard-raw/runs.sql is the same from the rows alone.
WITH w AS (
  SELECT s, d0 AT TIME ZONE 'UTC' AS e, d0::date AS day0
  FROM (SELECT s, CASE WHEN date_trunc('day', s AT TIME ZONE 'UTC') = s AT TIME ZONE 'UTC'
                       THEN date_trunc('day', s AT TIME ZONE 'UTC')
                       ELSE date_trunc('day', s AT TIME ZONE 'UTC') + interval '1 day' END AS d0
        FROM (SELECT now() - make_interval(days => $1::int) AS s) x) y
), again AS (
  -- The runs made again from their rows: those across the window's start, and those with pending rows.
  SELECT run_id FROM report_runs p, w
  WHERE p.first_at < w.s AND p.last_at >= w.s AND ($2::text IS NULL OR p.repo = $2::text)
  UNION SELECT run_id FROM chalk_report_pending() WHERE run_id IS NOT NULL
), ids AS (
  SELECT COALESCE(array_agg(run_id), '{}') AS ids FROM again
), p AS (
  SELECT p.* FROM report_runs p, w
  WHERE p.first_at >= w.s AND ($2::text IS NULL OR p.repo = $2::text) AND p.run_id NOT IN (SELECT run_id FROM again)
  UNION ALL SELECT f.* FROM ids, w, chalk_report_runs_of(ids.ids, w.s) f
  WHERE f.first_at IS NOT NULL AND ($2::text IS NULL OR f.repo = $2::text)
), keys AS (
  -- Per retried failure: [with lessons, of them passed, without, of them passed].
  SELECT prev_key, sum(g) AS g, sum(gp) AS gp, sum(ng) AS ng, sum(ngp) AS ngp FROM (
    SELECT k.prev_key, k.given AS g, k.given_passed AS gp, k.not_given AS ng, k.not_given_passed AS ngp
    FROM report_retry_keys k, w WHERE k.day >= w.day0 AND ($2::text IS NULL OR k.repo = $2::text)
    UNION ALL SELECT t.prev_key, -t.given::int, -(t.given AND t.passed)::int, -(NOT t.given)::int,
      -(NOT t.given AND t.passed)::int
    FROM report_retries t JOIN report_runs p USING (repo, run_id), w
    WHERE p.first_at >= w.e AND p.run_id IN (SELECT run_id FROM again) AND ($2::text IS NULL OR p.repo = $2::text)
    UNION ALL SELECT t.prev_key, t.given::int, (t.given AND t.passed)::int, (NOT t.given)::int,
      (NOT t.given AND t.passed)::int
    FROM report_retries t JOIN report_runs p USING (repo, run_id), w
    WHERE p.first_at >= w.s AND p.first_at < w.e AND p.run_id NOT IN (SELECT run_id FROM again)
      AND ($2::text IS NULL OR p.repo = $2::text)
    UNION ALL SELECT t.prev_key, t.given::int, (t.given AND t.passed)::int, (NOT t.given)::int,
      (NOT t.given AND t.passed)::int
    FROM ids, w, chalk_report_retries_of(ids.ids, w.s) t WHERE $2::text IS NULL OR t.repo = $2::text) x
  WHERE prev_key IS NOT NULL GROUP BY 1
), both_keys AS (
  SELECT * FROM keys WHERE g > 0 AND ng > 0
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
        'with', COALESCE(sum(g), 0), 'with_passed', COALESCE(sum(gp), 0),
        'without', COALESCE(sum(ng), 0), 'without_passed', COALESCE(sum(ngp), 0),
        'failures', count(*))
      FROM both_keys))
) AS doc
