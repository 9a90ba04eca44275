-- The 50 most recently active tickets of the window, with what their state is derived from.
-- $1: the window in days; $2: the repository, or NULL for every repository.
-- A ticket's latest runs row is report_tickets' (schema version 11) or a row not yet folded in
-- (report_pending), so the window's tickets are those whose latest row is in it.
-- tests/fixtures/dashboard-raw/tickets.sql is the same from the rows alone.
WITH act AS (
  SELECT repo, ticket, max(at) AS at FROM (
    SELECT repo, ticket, last_at AS at FROM report_tickets
      WHERE last_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
    UNION ALL SELECT repo, ticket, created_at FROM chalk_report_pending()
      WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
    UNION ALL SELECT repo, ticket, created_at FROM events
      WHERE created_at >= now() - make_interval(days => $1::int) AND ($2::text IS NULL OR repo = $2::text)
  ) x GROUP BY repo, ticket ORDER BY at DESC, repo, ticket LIMIT 50
)
SELECT json_build_object('tickets', (SELECT COALESCE(json_agg(json_build_object(
    'repo', t.repo, 'ticket', t.ticket, 'at', t.at,
    'loops', (SELECT count(*) FROM runs r WHERE r.repo = t.repo AND r.ticket = t.ticket AND r.kind IN ('continue', 'retry', 'fix-review')),
    'cost', (SELECT COALESCE(sum(cost_usd), 0) FROM runs r WHERE r.repo = t.repo AND r.ticket = t.ticket),
    'event_kind', e.kind, 'event_at', e.created_at,
    'call_kind', c.kind, 'call_status', c.agent_status, 'call_at', c.created_at) ORDER BY t.at DESC, t.repo, t.ticket), '[]'::json)
  FROM act t
  LEFT JOIN LATERAL (SELECT kind, created_at FROM events ev WHERE ev.repo = t.repo AND ev.ticket = t.ticket
                     ORDER BY id DESC LIMIT 1) e ON true
  LEFT JOIN LATERAL (SELECT kind, agent_status, created_at FROM runs r WHERE r.repo = t.repo AND r.ticket = t.ticket
                     AND r.kind <> 'distill' ORDER BY id DESC LIMIT 1) c ON true)) AS doc
