-- The report card's totals and breakdowns for a window: one JSON document.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- Runs unchanged on the embedded PGlite store and on any Postgres >= 14.
-- The window (created_at >= now() - $1 days) is read in two parts that add up to it: its rows before
-- its first whole UTC day and the rows not yet folded into the rollup (`edge`, from runs, each row
-- counted as the rollup counts it) and every later day from the rollup (report_*, schema versions 11
-- and 12), for every repository (`every`) or the one asked. A test's loops are report_test_totals' less
-- the days before the window when there are fewer days before it than in it (`back`).
-- tests/fixtures/dashboard-raw/summary.sql is the same document from the rows alone, which the tests
-- hold this to. The loop-cost median, 90th percentile and maximum are placed exactly by
-- core/report/data.ts from `cost_hist` (see there).
WITH w AS (
  SELECT s, d0 AT TIME ZONE 'UTC' AS e, d0::date AS day0,
    -- Fewer days of failing tests before the window than in it: read those, and the totals.
    d0::date - (SELECT min(day) FROM report_tests) < (SELECT max(day) FROM report_tests) - d0::date AS back
  FROM (SELECT s, CASE WHEN date_trunc('day', s AT TIME ZONE 'UTC') = s AT TIME ZONE 'UTC'
                       THEN date_trunc('day', s AT TIME ZONE 'UTC')
                       ELSE date_trunc('day', s AT TIME ZONE 'UTC') + interval '1 day' END AS d0
        FROM (SELECT now() - make_interval(days => $1::int) AS s) x) y
), edge AS (
  SELECT r FROM runs r, w
  WHERE r.created_at >= w.s AND r.created_at < w.e AND ($2::text IS NULL OR r.repo = $2::text)
  UNION ALL SELECT r FROM chalk_report_pending() r, w
  WHERE r.created_at >= w.e AND ($2::text IS NULL OR r.repo = $2::text)
), c AS (
  SELECT day, kind, model, prompts, n, cost, seconds, denials, input_tokens, output_tokens, cache_read_tokens,
         cache_write_tokens, turns, progressed, np_cost, with_denials, failed, failed_no_tests, status_fail, first_at
  FROM report_calls, w WHERE day >= w.day0 AND every = ($2::text IS NULL) AND repo = COALESCE($2::text, '')
  UNION ALL SELECT c.* FROM edge a CROSS JOIN LATERAL chalk_report_calls_of(a.r) c
), lp AS (
  -- The loops' dimensions, each key once (the rollup's days and the edge together).
  SELECT dim, key, sum(n) AS n, sum(turns) AS turns FROM (
    SELECT dim, key, n, turns FROM report_loops, w
    WHERE day >= w.day0 AND every = ($2::text IS NULL) AND repo = COALESCE($2::text, '')
    UNION ALL SELECT c.dim, c.key, c.n, c.turns FROM edge a CROSS JOIN LATERAL chalk_report_loops_of(a.r) c) x
  GROUP BY 1, 2
), et AS (
  -- The edge's failing and flaky tests, by name (a pending row's test may have no number yet).
  SELECT (a.r).repo AS repo, c.flaky, c.test, (a.r).ticket AS ticket, c.n
  FROM edge a CROSS JOIN LATERAL chalk_report_tests_of(a.r) c
), tl AS (
  -- Each test's loops in the window: the rollup's days by number (report_test_names), and the edge's.
  SELECT repo, flaky, test, max(test_id) AS test_id, sum(loops) AS loops FROM (
    SELECT k.repo, k.flaky, k.test, l.test_id, l.loops FROM (
      SELECT test_id, sum(n) AS loops FROM (
        SELECT t.test_id, t.n FROM report_tests t, w WHERE NOT w.back AND t.day >= w.day0
        UNION ALL SELECT x.test_id, x.n FROM report_test_totals x, w WHERE w.back
        UNION ALL SELECT t.test_id, -t.n FROM report_tests t, w WHERE w.back AND t.day < w.day0) u
      GROUP BY 1 HAVING sum(n) <> 0) l
    JOIN report_test_names k ON k.id = l.test_id WHERE $2::text IS NULL OR k.repo = $2::text
    UNION ALL SELECT repo, flaky, test, NULL, n FROM et) x
  GROUP BY 1, 2, 3
), cand AS (
  -- Every test that can be in its repository's ten (its loops at least the tenth's), whose tickets are then counted.
  SELECT repo, flaky, test, test_id, loops FROM (
    SELECT tl.*, rank() OVER (PARTITION BY repo, flaky ORDER BY loops DESC) AS rk FROM tl) x
  WHERE rk <= 10
), tt AS (
  -- Each candidate's tickets in the rollup's days (report_tests_test_idx, per candidate), and the edge's
  -- that those do not hold.
  SELECT c.test_id, k.tickets FROM cand c, w, LATERAL (
    SELECT count(DISTINCT t.ticket) AS tickets FROM report_tests t WHERE t.test_id = c.test_id AND t.day >= w.day0) k
  WHERE c.test_id IS NOT NULL
), te AS (
  SELECT e.repo, e.flaky, e.test, count(DISTINCT e.ticket) AS tickets
  FROM et e JOIN cand c ON c.repo = e.repo AND c.flaky = e.flaky AND c.test = e.test, w
  WHERE (SELECT count(*) FROM report_tests t WHERE t.test_id = c.test_id AND t.ticket = e.ticket AND t.day >= w.day0) = 0
  GROUP BY 1, 2, 3
), tests AS (
  SELECT c.repo, c.flaky, c.test, c.loops, COALESCE(tt.tickets, 0) + COALESCE(te.tickets, 0) AS tickets
  FROM cand c LEFT JOIN tt ON tt.test_id = c.test_id
  LEFT JOIN te ON te.repo = c.repo AND te.flaky = c.flaky AND te.test = c.test
), tk AS (
  -- A ticket, run or repository is in the window when its latest row is (report_tickets, report_runs, pending rows).
  SELECT repo, ticket FROM report_tickets t, w WHERE t.last_at >= w.s AND ($2::text IS NULL OR t.repo = $2::text)
  UNION SELECT repo, ticket FROM chalk_report_pending() r, w WHERE r.created_at >= w.s AND ($2::text IS NULL OR r.repo = $2::text)
), e AS (
  SELECT events.* FROM events, w
  WHERE created_at >= w.s AND ($2::text IS NULL OR repo = $2::text)
), ls AS (
  SELECT lessons.* FROM lessons, w
  WHERE created_at >= w.s AND ($2::text IS NULL OR repo = $2::text)
)
SELECT json_build_object(
  'totals', (SELECT json_build_object(
      'calls', COALESCE(sum(n), 0),
      'cost', COALESCE(sum(cost), 0),
      'loops', COALESCE(sum(n) FILTER (WHERE chalk_report_loop(kind)), 0),
      'loop_cost', COALESCE(sum(cost) FILTER (WHERE chalk_report_loop(kind)), 0),
      'checkpoints', COALESCE(sum(progressed) FILTER (WHERE chalk_report_loop(kind)), 0),
      'no_progress_cost', COALESCE(sum(np_cost) FILTER (WHERE chalk_report_loop(kind)), 0),
      -- Distinct counts by hashing (SELECT DISTINCT, UNION) rather than count(DISTINCT), which sorts.
      'tickets', (SELECT count(*) FROM tk),
      -- The runs: report_run_seen's days (a run id once, by its latest row), the first partial day's runs,
      -- and the runs whose stored latest row is before the window but a pending row is in it.
      'runs', (SELECT COALESCE(sum(n), 0) FROM report_run_seen k, w
               WHERE k.day >= w.day0 AND k.every = ($2::text IS NULL) AND k.repo = COALESCE($2::text, ''))
        + (SELECT count(*) FROM (SELECT DISTINCT run_id FROM report_runs p, w
                                 WHERE p.seen_at >= w.s AND p.seen_at < w.e AND ($2::text IS NULL OR p.repo = $2::text)) x, w
           WHERE $2::text IS NOT NULL OR (SELECT max(q.seen_at) FROM report_runs q WHERE q.run_id = x.run_id) < w.e)
        + (SELECT count(*) FROM (SELECT DISTINCT run_id FROM chalk_report_pending() r, w
                                 WHERE r.created_at >= w.s AND r.run_id IS NOT NULL AND ($2::text IS NULL OR r.repo = $2::text)) x, w
           WHERE NOT EXISTS (SELECT 1 FROM report_runs q WHERE q.run_id = x.run_id AND q.seen_at >= w.s
                             AND ($2::text IS NULL OR q.repo = $2::text))),
      'repositories', (SELECT count(*) FROM (SELECT DISTINCT repo FROM tk) x),
      'denials', COALESCE(sum(denials), 0),
      'loops_with_denials', COALESCE(sum(with_denials) FILTER (WHERE chalk_report_loop(kind)), 0),
      'failed_loops', COALESCE(sum(failed) FILTER (WHERE chalk_report_loop(kind)), 0),
      'failed_loops_no_tests', COALESCE(sum(failed_no_tests) FILTER (WHERE chalk_report_loop(kind)), 0),
      'input_tokens', COALESCE(sum(input_tokens), 0),
      'output_tokens', COALESCE(sum(output_tokens), 0),
      'cache_read_tokens', COALESCE(sum(cache_read_tokens), 0),
      'cache_write_tokens', COALESCE(sum(cache_write_tokens), 0),
      'turns', COALESCE(sum(turns), 0)
    ) FROM c),
  'events', (SELECT json_build_object(
      'detentions', count(*) FILTER (WHERE kind = 'detention'),
      'submitted', count(*) FILTER (WHERE kind = 'submitted'),
      'spec_blocked', count(*) FILTER (WHERE kind = 'spec_blocked'),
      'ready', count(*) FILTER (WHERE kind = 'ready')
    ) FROM e),
  'by_kind', (SELECT COALESCE(json_agg(json_build_object(
      'kind', kind, 'calls', n, 'cost', cost, 'seconds', seconds) ORDER BY cost DESC, kind), '[]'::json)
    FROM (SELECT kind, sum(n) AS n, sum(cost) AS cost, COALESCE(sum(seconds), 0) AS seconds FROM c GROUP BY kind) k),
  'by_day', (SELECT COALESCE(json_agg(json_build_object(
      'day', day, 'calls', n, 'cost', cost, 'loop_cost', loop_cost, 'no_progress_cost', np) ORDER BY day), '[]'::json)
    FROM (SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(n) AS n, sum(cost) AS cost,
                 COALESCE(sum(cost) FILTER (WHERE chalk_report_loop(kind)), 0) AS loop_cost,
                 COALESCE(sum(np_cost) FILTER (WHERE chalk_report_loop(kind)), 0) AS np
          FROM c GROUP BY 1) d),
  -- Loop cost against the cap it ran under: tenths of the cap, 0..10 (10 = at or over the cap). The cap
  -- is the latest loop's (an index scan backwards); median, p90 and max are filled in from cost_hist.
  'budget', json_build_object(
      'cap', (SELECT r.budget_usd FROM runs r, w
              WHERE r.created_at >= w.s AND ($2::text IS NULL OR r.repo = $2::text) AND chalk_report_loop(r.kind)
              ORDER BY r.created_at DESC, r.id DESC LIMIT 1),
      'median', NULL,
      'p90', NULL,
      'max', NULL,
      'near_cap', (SELECT COALESCE(sum(n), 0) FROM lp WHERE dim = 'near'),
      'buckets', (SELECT COALESCE(json_agg(json_build_object('bucket', b, 'loops', n) ORDER BY b), '[]'::json)
                  FROM (SELECT key::int AS b, sum(n) AS n FROM lp WHERE dim = 'bucket' GROUP BY 1) bb)),
  -- The loops' cost histogram: [bucket, loops] by bucket (chalk_report_bucket).
  'cost_hist', (SELECT COALESCE(json_agg(json_build_array(b, n) ORDER BY b), '[]'::json)
    FROM (SELECT key::int AS b, sum(n) AS n FROM lp WHERE dim = 'cost' GROUP BY 1) h),
  'by_prompts', (SELECT COALESCE(json_agg(json_build_object(
      'prompts', prompts, 'first_at', first_at, 'loops', loops, 'retries', retries, 'checkpoints', cps, 'cost', cost) ORDER BY first_at), '[]'::json)
    FROM (SELECT prompts, min(first_at) AS first_at,
                 COALESCE(sum(n) FILTER (WHERE chalk_report_loop(kind)), 0) AS loops,
                 COALESCE(sum(n) FILTER (WHERE kind = 'retry'), 0) AS retries,
                 COALESCE(sum(progressed) FILTER (WHERE chalk_report_loop(kind)), 0) AS cps,
                 sum(cost) AS cost FROM c GROUP BY prompts) p),
  'by_model', (SELECT COALESCE(json_agg(json_build_object(
      'model', model, 'loops', loops, 'retries', retries, 'checkpoints', cps, 'cost', cost) ORDER BY cost DESC, model), '[]'::json)
    FROM (SELECT model,
                 COALESCE(sum(n) FILTER (WHERE chalk_report_loop(kind)), 0) AS loops,
                 COALESCE(sum(n) FILTER (WHERE kind = 'retry'), 0) AS retries,
                 COALESCE(sum(progressed) FILTER (WHERE chalk_report_loop(kind)), 0) AS cps,
                 sum(cost) AS cost FROM c GROUP BY model) m),
  -- The checks: how often each ran, failed something, and what it and the fixes it asked for cost.
  'checks', (SELECT json_build_object(
      'review', json_build_object(
        'ran', COALESCE(sum(n) FILTER (WHERE kind = 'review'), 0),
        'failed', COALESCE(sum(status_fail) FILTER (WHERE kind = 'review'), 0),
        'cost', COALESCE(sum(cost) FILTER (WHERE kind = 'review'), 0),
        'fix_loops', COALESCE(sum(n) FILTER (WHERE kind = 'fix-review'), 0),
        'fix_cost', COALESCE(sum(cost) FILTER (WHERE kind = 'fix-review'), 0)),
      'spec_check', json_build_object(
        'ran', COALESCE(sum(n) FILTER (WHERE kind = 'spec-check'), 0),
        'failed', COALESCE(sum(status_fail) FILTER (WHERE kind = 'spec-check'), 0),
        'cost', COALESCE(sum(cost) FILTER (WHERE kind = 'spec-check'), 0),
        'blocked_specs', (SELECT count(*) FROM e WHERE kind = 'spec_blocked'))
    ) FROM c),
  'agent', (SELECT COALESCE(json_agg(json_build_object('status', key, 'loops', n, 'turns', turns) ORDER BY n DESC, key), '[]'::json)
    FROM (SELECT key, sum(n) AS n, COALESCE(sum(turns), 0) AS turns FROM lp WHERE dim = 'agent' GROUP BY key) a),
  'verdicts', (SELECT COALESCE(json_object_agg(key, n), '{}'::json)
    FROM (SELECT key, sum(n) AS n FROM lp WHERE dim = 'verdict' GROUP BY key) v),
  'fp_rules', (SELECT COALESCE(json_object_agg(key, n), '{}'::json)
    FROM (SELECT key, sum(n) AS n FROM lp WHERE dim = 'fp' GROUP BY key) f),
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
          FROM tests WHERE flaky) ranked
    WHERE rank <= 10),
  -- Which tests keep failing: up to 10 per repository, by failing loops.
  'failing_tests', (SELECT COALESCE(json_agg(json_build_object(
      'repo', repo, 'test', test, 'loops', loops, 'tickets', tickets) ORDER BY repo, loops DESC, test), '[]'::json)
    FROM (SELECT repo, test, loops, tickets, row_number() OVER (PARTITION BY repo ORDER BY loops DESC, tickets DESC, test) AS rank
          FROM tests WHERE NOT flaky) ranked
    WHERE rank <= 10)
) AS doc
