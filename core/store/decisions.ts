import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { SHARE_DIR } from '../paths.js';
import { LOOP_KINDS } from '../ports/agent.js';
import type { DecisionRecord, StuckAnswerFacts } from '../ports/store.js';
import { urlWithoutPassword } from './target.js';

/** A decider URL as stored: no user name or password. */
export function cleanUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return urlWithoutPassword(url) || null;
  }
}

/**
 * Records decider answers in one transaction. A row without call_id is tied to the newest
 * loop call (continue, retry, fix-review) of the same run_id and loop.
 */
export async function recordDecisions(db: Pool, rows: DecisionRecord[]): Promise<number> {
  if (rows.length === 0) return 0;
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    for (const d of rows) {
      await c.query(
        `INSERT INTO decisions (call_id, run_id, kind, question, answer, confidence, threshold, mode,
           latency_ms, acted, lesson_id, model, error, url)
         VALUES (
           COALESCE($1::bigint, (SELECT id FROM runs WHERE run_id = $2 AND loop = $15
              AND kind = ANY($16::text[]) ORDER BY id DESC LIMIT 1)),
           $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          d.callId ?? null,
          d.runId ?? null,
          d.kind,
          d.question,
          d.answer ?? null,
          d.confidence ?? null,
          d.threshold ?? null,
          d.mode,
          d.latencyMs ?? null,
          d.acted ?? false,
          d.lessonId ?? null,
          d.model ?? null,
          d.error ?? null,
          cleanUrl(d.url),
          d.loop ?? null,
          LOOP_KINDS,
        ],
      );
    }
    await c.query('COMMIT');
    return rows.length;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

interface StuckAnswerJson {
  url: string;
  model: string;
  run: string;
  mode: string;
  answer: 'yes' | 'no';
  confidence: number | string;
  later_progress: boolean;
  detained: boolean;
}

/**
 * Every stuck answer with a confidence and what its run did next: the report card's own query
 * (share/dashboard/stuck-answers.sql), over all history and every repository.
 */
export async function stuckAnswers(db: Pool): Promise<StuckAnswerFacts[]> {
  const sql = readFileSync(join(SHARE_DIR, 'dashboard', 'stuck-answers.sql'), 'utf8');
  const r = await db.query<{ doc: StuckAnswerJson[] }>(sql, [0, null]);
  return (r.rows[0]?.doc ?? []).map((a) => ({
    url: a.url,
    model: a.model,
    run: a.run,
    mode: a.mode,
    answer: a.answer,
    confidence: Number(a.confidence),
    laterProgress: a.later_progress,
    detained: a.detained,
  }));
}
