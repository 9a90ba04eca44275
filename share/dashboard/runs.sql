-- The report card's per-run facts for a window: the verdict ledger's runs and whether lessons helped.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- Each run's facts are report_runs' (schema version 11, made from the run's loops whenever they are folded
-- in); a run whose loops began before the window and go on inside it, or that has rows not yet folded in
-- (report_pending), is made from its loops in the window (chalk_report_runs_of), as the rows alone would
-- give. The ledger's runs come grouped by their facts (core/report/ledger.ts's runFacts; ledgerOf adds
-- them up): the later days' from report_run_days (schema version 12), each run that opened a lesson moved
-- to the detained group one by one. The retries of the window's runs are report_retry_keys' days (schema version 12, by the day
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
  -- (The window's start written out, not w.s, so the planner estimates each side: one is short.)
  SELECT run_id FROM report_runs p
  WHERE p.first_at < now() - make_interval(days => $1::int) AND p.last_at >= now() - make_interval(days => $1::int)
    AND ($2::text IS NULL OR p.repo = $2::text)
  UNION SELECT run_id FROM chalk_report_pending() WHERE run_id IS NOT NULL
), ids AS (
  SELECT COALESCE(array_agg(run_id), '{}') AS ids FROM again
), lr AS (
  SELECT DISTINCT run_id FROM lessons WHERE run_id IS NOT NULL
), p AS (
  -- The runs taken one by one: the first partial day's, and those made again.
  SELECT p.* FROM report_runs p, w
  WHERE p.first_at >= w.s AND p.first_at < w.e AND ($2::text IS NULL OR p.repo = $2::text)
    AND p.run_id NOT IN (SELECT run_id FROM again)
  UNION ALL SELECT f.* FROM ids, w, chalk_report_runs_of(ids.ids, w.s) f
  WHERE f.first_at IS NOT NULL AND ($2::text IS NULL OR f.repo = $2::text)
), d AS (
  -- The later days' runs (report_run_days) are the rest: the days' sums less the runs made again, and
  -- with the runs that opened a lesson (detained) moved from the sums to their own facts (each found by
  -- its id, report_runs_run_idx).
  SELECT p.*, p.run_id NOT IN (SELECT run_id FROM again) AS moved
  FROM lr, w, LATERAL (SELECT * FROM report_runs p WHERE p.run_id = lr.run_id AND p.first_at >= w.e
                         AND ($2::text IS NULL OR p.repo = $2::text) OFFSET 0) p
  UNION ALL SELECT p.*, false FROM again, w, LATERAL (
    SELECT * FROM report_runs p WHERE p.run_id = again.run_id AND p.first_at >= w.e
      AND ($2::text IS NULL OR p.repo = $2::text) OFFSET 0) p
  WHERE again.run_id NOT IN (SELECT run_id FROM lr)
), facts AS (
  SELECT mode, detained, has_verdict, any_stall, judged, blocker_only, stop_verdict, false_stop, improving,
    sum(runs) AS runs, sum(np_cost) AS np_cost, sum(saved) AS saved, sum(hw) AS hw, sum(hwp) AS hwp, sum(hwo) AS hwo,
    sum(hwop) AS hwop
  FROM (
    SELECT k.mode, false AS detained, k.has_verdict, k.any_stall, k.judged, k.blocker_only,
      NULLIF(k.stop_verdict, '') AS stop_verdict, k.false_stop, k.improving, k.runs, k.np_cost, k.saved,
      k.help_with AS hw, k.help_with_passed AS hwp, k.help_without AS hwo, k.help_without_passed AS hwop
    FROM report_run_days k, w WHERE k.day >= w.day0 AND k.every = ($2::text IS NULL) AND k.repo = COALESCE($2::text, '')
    UNION ALL SELECT COALESCE(mode, 'unknown'), false, has_verdict, any_stall, judged, blocker_only, stop_verdict,
      false_stop, improving, -1, -np_cost, -saved, -help_with, -help_with_passed, -help_without, -help_without_passed
    FROM d
    UNION ALL SELECT COALESCE(mode, 'unknown'), true, has_verdict, any_stall, judged, blocker_only, stop_verdict,
      false_stop, improving, 1, np_cost, saved, help_with, help_with_passed, help_without, help_without_passed
    FROM d WHERE moved
    UNION ALL SELECT COALESCE(p.mode, 'unknown'), lr.run_id IS NOT NULL, has_verdict, any_stall, judged, blocker_only,
      stop_verdict, false_stop, improving, 1, np_cost, saved, help_with, help_with_passed, help_without, help_without_passed
    FROM p LEFT JOIN lr ON lr.run_id = p.run_id) x
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9 HAVING sum(runs) <> 0
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
    FROM (SELECT mode, detained, judged, blocker_only, stop_verdict, false_stop, improving,
                 sum(runs) AS runs, sum(np_cost) AS np_cost, sum(saved) AS saved
          FROM facts WHERE has_verdict GROUP BY 1, 2, 3, 4, 5, 6, 7) g),
  'verdictless_runs', (SELECT COALESCE(sum(runs), 0) FROM facts WHERE NOT has_verdict AND any_stall),
  'lessons_help', json_build_object(
    'all', (SELECT json_build_object(
        'with', COALESCE(sum(hw), 0), 'with_passed', COALESCE(sum(hwp), 0),
        'without', COALESCE(sum(hwo), 0), 'without_passed', COALESCE(sum(hwop), 0))
      FROM facts),
    'same_failure', (SELECT json_build_object(
        'with', COALESCE(sum(g), 0), 'with_passed', COALESCE(sum(gp), 0),
        'without', COALESCE(sum(ng), 0), 'without_passed', COALESCE(sum(ngp), 0),
        'failures', count(*))
      FROM both_keys))
) AS doc
