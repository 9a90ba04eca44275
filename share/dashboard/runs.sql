-- The report card's per-run facts for a window: the verdict ledger's runs and whether lessons helped.
-- $1: the window in days; $2: the repository, or NULL for every repository.
WITH l AS (
  SELECT id, repo, ticket, run_id, loop, kind, cost_usd, progressed, verdict, fp_rules, lessons, tests_hash, first_error
  FROM runs
  WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
    AND kind IN ('continue', 'retry', 'fix-review') AND run_id IS NOT NULL
), per_run AS (
  SELECT run_id,
         bool_or(verdict IS NOT NULL) AS has_verdict,
         bool_or(NOT progressed) AS any_stall,
         (array_agg(fp_rules ORDER BY loop DESC, id DESC))[1] AS mode,
         json_agg(json_build_array(cost_usd, progressed, verdict) ORDER BY loop, id) AS loops
  FROM l GROUP BY run_id
), retries AS (
  SELECT lessons > 0 AS given, progressed, prev_key FROM (
    SELECT kind, lessons, progressed,
           lag(COALESCE(tests_hash, first_error)) OVER (PARTITION BY run_id ORDER BY loop, id) AS prev_key
    FROM l) x
  WHERE kind = 'retry'
), both_keys AS (
  SELECT prev_key FROM retries WHERE prev_key IS NOT NULL
  GROUP BY prev_key HAVING bool_or(given) AND bool_or(NOT given)
)
SELECT json_build_object(
  -- Runs with a verdict: [cost, progressed, verdict] per loop, the mode in force, and whether it was detained.
  'ledger_runs', (SELECT COALESCE(json_agg(json_build_object(
      'mode', COALESCE(p.mode, 'unknown'),
      'detained', EXISTS (SELECT 1 FROM lessons x WHERE x.run_id = p.run_id),
      'loops', p.loops)), '[]'::json)
    FROM per_run p WHERE p.has_verdict),
  'verdictless_runs', (SELECT count(*) FROM per_run WHERE NOT has_verdict AND any_stall),
  'lessons_help', json_build_object(
    'all', (SELECT json_build_object(
        'with', count(*) FILTER (WHERE given), 'with_passed', count(*) FILTER (WHERE given AND progressed),
        'without', count(*) FILTER (WHERE NOT given), 'without_passed', count(*) FILTER (WHERE NOT given AND progressed))
      FROM retries),
    'same_failure', (SELECT json_build_object(
        'with', count(*) FILTER (WHERE given), 'with_passed', count(*) FILTER (WHERE given AND progressed),
        'without', count(*) FILTER (WHERE NOT given), 'without_passed', count(*) FILTER (WHERE NOT given AND progressed),
        'failures', (SELECT count(*) FROM both_keys))
      FROM retries WHERE prev_key IN (SELECT prev_key FROM both_keys)))
) AS doc
