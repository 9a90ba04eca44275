import type { Pool } from 'pg';
import { LOOP_KINDS } from '../ports/agent.js';
import type { TicketState, TicketSummary } from '../ports/store.js';

const EVENT_STATE: Record<string, TicketState> = {
  detention: 'detained',
  submitted: 'submitted',
  spec_blocked: 'spec-blocked',
  ready: 'done',
};

export interface StateInputs {
  lastEvent: { kind: string; at: Date } | null;
  lastCall: { kind: string; agentStatus: string; at: Date } | null;
}

/**
 * A ticket's state from the database: its latest event unless an agent call (other than
 * distill) came after it; else `done` when the last call was a passing review, `stopped` for
 * any other last call, `new` with no call.
 */
export function deriveState({ lastEvent, lastCall }: StateInputs): TicketState {
  if (lastEvent && (!lastCall || lastEvent.at.getTime() >= lastCall.at.getTime())) {
    return EVENT_STATE[lastEvent.kind] ?? 'stopped';
  }
  if (!lastCall) return 'new';
  return lastCall.kind === 'review' && lastCall.agentStatus === 'pass' ? 'done' : 'stopped';
}

interface Row {
  ticket: string;
  at: Date | null;
  loops: number;
  cost: string;
  fixes: number;
  event_kind: string | null;
  event_at: Date | null;
  call_kind: string | null;
  call_status: string | null;
  call_at: Date | null;
}

/** Every ticket of a repository with a call, event or lesson, most recently active first. */
export async function ticketSummaries(db: Pool, repo: string): Promise<TicketSummary[]> {
  const r = await db.query<Row>(
    `WITH t AS (
       SELECT ticket, max(at) AS at FROM (
         SELECT ticket, created_at AS at FROM runs WHERE repo = $1
         UNION ALL SELECT ticket, created_at FROM events WHERE repo = $1
         UNION ALL SELECT ticket, COALESCE(resolved_at, created_at) FROM lessons WHERE repo = $1
       ) x GROUP BY ticket
     )
     SELECT t.ticket, t.at,
       (SELECT count(*) FROM runs r WHERE r.repo = $1 AND r.ticket = t.ticket
          AND r.kind = ANY($2::text[]))::int AS loops,
       (SELECT COALESCE(sum(cost_usd), 0) FROM runs r WHERE r.repo = $1 AND r.ticket = t.ticket)::text AS cost,
       (SELECT count(*) FROM lessons l WHERE l.repo = $1 AND l.ticket = t.ticket
          AND l.resolved_at IS NOT NULL)::int AS fixes,
       e.kind AS event_kind, e.created_at AS event_at,
       c.kind AS call_kind, c.agent_status AS call_status, c.created_at AS call_at
     FROM t
     LEFT JOIN LATERAL (SELECT kind, created_at FROM events ev WHERE ev.repo = $1 AND ev.ticket = t.ticket
                        ORDER BY id DESC LIMIT 1) e ON true
     LEFT JOIN LATERAL (SELECT kind, agent_status, created_at FROM runs r WHERE r.repo = $1 AND r.ticket = t.ticket
                        AND r.kind <> 'distill' ORDER BY id DESC LIMIT 1) c ON true
     ORDER BY t.at DESC NULLS LAST, t.ticket`,
    [repo, LOOP_KINDS],
  );
  return r.rows.map((row) => ({
    ticket: row.ticket,
    state: deriveState({
      lastEvent: row.event_kind && row.event_at ? { kind: row.event_kind, at: row.event_at } : null,
      lastCall:
        row.call_kind && row.call_at
          ? { kind: row.call_kind, agentStatus: row.call_status ?? '', at: row.call_at }
          : null,
    }),
    loops: row.loops,
    costUsd: Number(row.cost),
    fixes: row.fixes,
    lastActiveAt: row.at,
  }));
}
