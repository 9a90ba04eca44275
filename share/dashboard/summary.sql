-- The report card's totals and breakdowns for a window: one JSON document.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- Runs unchanged on the embedded PGlite store and on any Postgres >= 14.
WITH r AS (
  SELECT * FROM runs
  WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
), l AS (
  SELECT * FROM r WHERE kind IN ('continue', 'retry', 'fix-review')
), e AS (
  SELECT * FROM events
  WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
), ls AS (
  SELECT * FROM lessons
  WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
)
SELECT json_build_object(
  'totals', (SELECT json_build_object(
      'calls', count(*),
      'cost', COALESCE(sum(cost_usd), 0),
      'loops', count(*) FILTER (WHERE kind IN ('continue', 'retry', 'fix-review')),
      'loop_cost', COALESCE(sum(cost_usd) FILTER (WHERE kind IN ('continue', 'retry', 'fix-review')), 0),
      'checkpoints', count(*) FILTER (WHERE progressed AND kind IN ('continue', 'retry', 'fix-review')),
      'no_progress_cost', COALESCE(sum(cost_usd) FILTER (WHERE NOT progressed AND kind IN ('continue', 'retry', 'fix-review')), 0),
      -- Distinct counts by hashing (SELECT DISTINCT) rather than count(DISTINCT), which sorts.
      'tickets', (SELECT count(*) FROM (SELECT DISTINCT repo, ticket FROM r) x),
      'runs', (SELECT count(*) FROM (SELECT DISTINCT run_id FROM r WHERE run_id IS NOT NULL) x),
      'repositories', (SELECT count(*) FROM (SELECT DISTINCT repo FROM r) x),
      'denials', COALESCE(sum(denials), 0),
      'loops_with_denials', count(*) FILTER (WHERE denials > 0 AND kind IN ('continue', 'retry', 'fix-review')),
      'failed_loops', count(*) FILTER (WHERE rubric_exit <> 0 AND kind IN ('continue', 'retry', 'fix-review')),
      'failed_loops_no_tests', count(*) FILTER (WHERE rubric_exit <> 0 AND failing_tests IS NULL AND kind IN ('continue', 'retry', 'fix-review')),
      'input_tokens', COALESCE(sum(input_tokens), 0),
      'output_tokens', COALESCE(sum(output_tokens), 0),
      'cache_read_tokens', COALESCE(sum(cache_read_tokens), 0),
      'cache_write_tokens', COALESCE(sum(cache_write_tokens), 0),
      'turns', COALESCE(sum(turns), 0)
    ) FROM r),
  'events', (SELECT json_build_object(
      'detentions', count(*) FILTER (WHERE kind = 'detention'),
      'submitted', count(*) FILTER (WHERE kind = 'submitted'),
      'spec_blocked', count(*) FILTER (WHERE kind = 'spec_blocked'),
      'ready', count(*) FILTER (WHERE kind = 'ready')
    ) FROM e),
  'by_kind', (SELECT COALESCE(json_agg(json_build_object(
      'kind', kind, 'calls', n, 'cost', cost, 'seconds', seconds) ORDER BY cost DESC, kind), '[]'::json)
    FROM (SELECT kind, count(*) AS n, sum(cost_usd) AS cost, COALESCE(sum(duration_s), 0) AS seconds
          FROM r GROUP BY kind) k),
  'by_day', (SELECT COALESCE(json_agg(json_build_object(
      'day', day, 'calls', n, 'cost', cost, 'loop_cost', loop_cost, 'no_progress_cost', np) ORDER BY day), '[]'::json)
    FROM (SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n, sum(cost_usd) AS cost,
                 COALESCE(sum(cost_usd) FILTER (WHERE kind IN ('continue', 'retry', 'fix-review')), 0) AS loop_cost,
                 COALESCE(sum(cost_usd) FILTER (WHERE NOT progressed AND kind IN ('continue', 'retry', 'fix-review')), 0) AS np
          FROM r GROUP BY 1) d),
  -- Loop cost against the cap it ran under: tenths of the cap, 0..10 (10 = at or over the cap).
  'budget', (SELECT json_build_object(
      'cap', (SELECT budget_usd FROM l ORDER BY created_at DESC, id DESC LIMIT 1),
      'median', percentile_cont(0.5) WITHIN GROUP (ORDER BY cost_usd),
      'p90', percentile_cont(0.9) WITHIN GROUP (ORDER BY cost_usd),
      'max', max(cost_usd),
      'near_cap', count(*) FILTER (WHERE budget_usd > 0 AND cost_usd >= 0.9 * budget_usd),
      'buckets', (SELECT COALESCE(json_agg(json_build_object('bucket', b, 'loops', n) ORDER BY b), '[]'::json)
                  FROM (SELECT LEAST(10, floor(10 * cost_usd / NULLIF(budget_usd, 0)))::int AS b, count(*) AS n
                        FROM l WHERE budget_usd > 0 GROUP BY 1) bb)
    ) FROM l),
  'by_prompts', (SELECT COALESCE(json_agg(json_build_object(
      'prompts', prompts, 'first_at', first_at, 'loops', loops, 'retries', retries, 'checkpoints', cps, 'cost', cost) ORDER BY first_at), '[]'::json)
    FROM (SELECT prompts, min(created_at) AS first_at,
                 count(*) FILTER (WHERE kind IN ('continue', 'retry', 'fix-review')) AS loops,
                 count(*) FILTER (WHERE kind = 'retry') AS retries,
                 count(*) FILTER (WHERE progressed AND kind IN ('continue', 'retry', 'fix-review')) AS cps,
                 sum(cost_usd) AS cost FROM r GROUP BY prompts) p),
  'by_model', (SELECT COALESCE(json_agg(json_build_object(
      'model', model, 'loops', loops, 'retries', retries, 'checkpoints', cps, 'cost', cost) ORDER BY cost DESC, model), '[]'::json)
    FROM (SELECT model,
                 count(*) FILTER (WHERE kind IN ('continue', 'retry', 'fix-review')) AS loops,
                 count(*) FILTER (WHERE kind = 'retry') AS retries,
                 count(*) FILTER (WHERE progressed AND kind IN ('continue', 'retry', 'fix-review')) AS cps,
                 sum(cost_usd) AS cost FROM r GROUP BY model) m),
  -- The checks: how often each ran, failed something, and what it and the fixes it asked for cost.
  'checks', (SELECT json_build_object(
      'review', json_build_object(
        'ran', count(*) FILTER (WHERE kind = 'review'),
        'failed', count(*) FILTER (WHERE kind = 'review' AND agent_status = 'fail'),
        'cost', COALESCE(sum(cost_usd) FILTER (WHERE kind = 'review'), 0),
        'fix_loops', count(*) FILTER (WHERE kind = 'fix-review'),
        'fix_cost', COALESCE(sum(cost_usd) FILTER (WHERE kind = 'fix-review'), 0)),
      'spec_check', json_build_object(
        'ran', count(*) FILTER (WHERE kind = 'spec-check'),
        'failed', count(*) FILTER (WHERE kind = 'spec-check' AND agent_status = 'fail'),
        'cost', COALESCE(sum(cost_usd) FILTER (WHERE kind = 'spec-check'), 0),
        'blocked_specs', (SELECT count(*) FROM e WHERE kind = 'spec_blocked'))
    ) FROM r),
  'agent', (SELECT COALESCE(json_agg(json_build_object('status', agent_status, 'loops', n, 'turns', turns) ORDER BY n DESC, agent_status), '[]'::json)
    FROM (SELECT agent_status, count(*) AS n, COALESCE(sum(turns), 0) AS turns FROM l GROUP BY agent_status) a),
  'verdicts', (SELECT COALESCE(json_object_agg(v, n), '{}'::json)
    FROM (SELECT COALESCE(verdict, 'none') AS v, count(*) AS n FROM l GROUP BY 1) v),
  'fp_rules', (SELECT COALESCE(json_object_agg(m, n), '{}'::json)
    FROM (SELECT COALESCE(fp_rules, 'unknown') AS m, count(*) AS n FROM l GROUP BY 1) f),
  -- Detentions by the start of the stored reason (the lesson's signature), as a label from a fixed set.
  'detentions_by_reason', (SELECT COALESCE(json_object_agg(reason, n), '{}'::json)
    FROM (SELECT CASE
                   WHEN signature LIKE 'agent reported a blocker%' THEN 'blocked'
                   WHEN signature LIKE 'loop limit%' THEN 'loop_limit'
                   WHEN signature LIKE 'final review%' THEN 'review'
                   WHEN signature LIKE 'deja\_vu:%' THEN 'deja_vu'
                   WHEN signature LIKE 'repeat:%' THEN 'repeat'
                   WHEN signature LIKE 'no\_change:%' THEN 'no_change'
                   WHEN signature LIKE 'stuck:%' THEN 'stuck'
                   WHEN signature LIKE 'rubric failed%' OR signature LIKE 'rubric printed%' THEN 'failed'
                   WHEN signature LIKE 'agent stopped early%' THEN 'agent_error'
                   WHEN signature LIKE 'rubric passed but no checkpoint%' THEN 'no_checkpoint'
                   ELSE 'other' END AS reason, count(*) AS n
          FROM ls GROUP BY 1) d),
  'lessons', (SELECT json_build_object(
      'opened', count(*),
      'resolved', count(*) FILTER (WHERE resolved_at IS NOT NULL),
      'distilled', count(*) FILTER (WHERE lesson IS NOT NULL AND resolved_at IS NOT NULL),
      'fingerprinted', count(*) FILTER (WHERE fingerprint IS NOT NULL),
      'scope_repo', count(*) FILTER (WHERE scope = 'repo'),
      'scope_general', count(*) FILTER (WHERE scope = 'general')
    ) FROM ls),
  -- Tests that failed and then passed on the same tree (runs.flaky_tests): up to 10 per repository.
  'flaky_tests', (SELECT COALESCE(json_agg(json_build_object(
      'repo', repo, 'test', test, 'loops', loops, 'tickets', tickets) ORDER BY repo, loops DESC, test), '[]'::json)
    FROM (SELECT repo, test, loops, tickets, row_number() OVER (PARTITION BY repo ORDER BY loops DESC, tickets DESC, test) AS rank
          FROM (SELECT repo, t AS test, count(*) AS loops, count(DISTINCT ticket) AS tickets
                FROM l, unnest(string_to_array(flaky_tests, E'\n')) AS t
                WHERE flaky_tests IS NOT NULL AND t <> '' GROUP BY repo, t) c) ranked
    WHERE rank <= 10),
  -- Which tests keep failing: up to 10 per repository, by failing loops.
  'failing_tests', (SELECT COALESCE(json_agg(json_build_object(
      'repo', repo, 'test', test, 'loops', loops, 'tickets', tickets) ORDER BY repo, loops DESC, test), '[]'::json)
    FROM (SELECT repo, test, loops, tickets, row_number() OVER (PARTITION BY repo ORDER BY loops DESC, tickets DESC, test) AS rank
          FROM (SELECT repo, t AS test, count(*) AS loops, count(DISTINCT ticket) AS tickets
                FROM l, unnest(string_to_array(failing_tests, E'\n')) AS t
                WHERE failing_tests IS NOT NULL AND t <> '' GROUP BY repo, t) c) ranked
    WHERE rank <= 10)
) AS doc
