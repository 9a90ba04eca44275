import type { Pool } from 'pg';
import { LOOP_KINDS } from '../ports/agent.js';
import type { CallRecord, RunTotals } from '../ports/store.js';

const orNull = <T>(v: T | null | undefined): T | null => (v === undefined || v === '' ? null : v);

/** The `runs` columns in insert order, each with how a CallRecord gives its value. */
const COLUMNS: Array<[string, (c: CallRecord) => unknown]> = [
  ['repo', (c) => c.repo],
  ['ticket', (c) => c.ticket],
  ['branch', (c) => c.branch],
  ['loop', (c) => c.loop],
  ['kind', (c) => c.kind],
  ['agent_status', (c) => c.agentStatus],
  ['rubric_exit', (c) => c.rubricExit],
  ['progressed', (c) => c.progressed],
  ['model', (c) => c.model || 'default'],
  ['prompts', (c) => c.prompts],
  ['cost_usd', (c) => c.costUsd],
  ['budget_usd', (c) => c.budgetUsd],
  ['duration_s', (c) => Math.round(c.durationS)],
  ['input_tokens', (c) => c.inputTokens],
  ['output_tokens', (c) => c.outputTokens],
  ['cache_read_tokens', (c) => c.cacheReadTokens],
  ['cache_write_tokens', (c) => c.cacheWriteTokens],
  ['turns', (c) => c.turns],
  ['denials', (c) => c.denials],
  ['lessons', (c) => c.lessons],
  ['run_id', (c) => orNull(c.runId)],
  ['tests_hash', (c) => orNull(c.testsHash)],
  ['failing', (c) => orNull(c.failing)],
  ['failing_tests', (c) => (c.failingTests ? c.failingTests.slice(0, 100).join('\n') : null)],
  ['first_error', (c) => orNull(c.firstError)],
  ['tree_id', (c) => orNull(c.treeId)],
  ['verdict', (c) => orNull(c.verdict)],
  ['fp_rules', (c) => orNull(c.fpRules)],
  ['flaky_tests', (c) => (c.flakyTests && c.flakyTests.length > 0 ? c.flakyTests.slice(0, 100).join('\n') : null)],
];

const INSERT = `INSERT INTO runs (${COLUMNS.map(([n]) => n).join(', ')})
  VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`;

/** Records one agent call; returns its `runs` id. */
export async function recordCall(db: Pool, call: CallRecord): Promise<number> {
  const r = await db.query<{ id: string }>(
    INSERT,
    COLUMNS.map(([, get]) => get(call)),
  );
  return Number(r.rows[0]?.id);
}

/** What one run id's rows add up to: all calls' cost, and its last finished loop (an `interrupted` call is none). */
export async function runTotals(db: Pool, repo: string, runId: string): Promise<RunTotals> {
  const r = await db.query<{ spent: string; loop: number | null; progressed: boolean | null }>(
    `SELECT (SELECT COALESCE(sum(cost_usd), 0) FROM runs WHERE repo = $1 AND run_id = $2)::text AS spent,
       l.loop, l.progressed
     FROM (SELECT 1) one
     LEFT JOIN LATERAL (SELECT loop, progressed FROM runs WHERE repo = $1 AND run_id = $2
                          AND kind = ANY($3::text[]) AND agent_status <> 'interrupted'
                        ORDER BY loop DESC, id DESC LIMIT 1) l ON true`,
    [repo, runId, LOOP_KINDS],
  );
  const row = r.rows[0];
  return {
    spentUsd: Number(row?.spent ?? 0),
    lastLoop: row?.loop ?? 0,
    lastLoopProgressed: row?.progressed ?? null,
  };
}
