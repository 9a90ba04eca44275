import type { Pool } from 'pg';
import type { RecalledLesson, SemanticGate, SemanticQuery, UnembeddedLesson } from '../ports/store.js';
import { COLUMNS, type Row, toLesson } from './lessons.js';
import { embeddingParam, type Shape } from './shape.js';

/**
 * The embedding side of the lessons table: what semantic recall asks before it embeds anything,
 * the semantic rung itself (pgvector's `<=>` on the HNSW cosine index), and the back-fill's two
 * queries. Where lessons.embedding is a real[] (a Postgres without pgvector) there is no
 * semantic recall: the gate says so, and the rung finds nothing.
 */

/** What every recall rung searches: resolved, not forgotten lessons. */
const RECALLABLE = `resolved_at IS NOT NULL AND forgotten_at IS NULL`;

/** Whether the column is pgvector, and how many lessons are resolved and not forgotten. */
export async function semanticGate(db: Pool, shape: Shape): Promise<SemanticGate> {
  const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM lessons WHERE ${RECALLABLE}`);
  return { vector: shape.vector, resolved: Number(r.rows[0]?.n ?? 0) };
}

/** HNSW candidates examined per search: enough that the scope filter after the index still leaves the best. */
export const EF_SEARCH = 100;

/**
 * The semantic rung: lessons within the scope rule whose embedding's cosine similarity to the
 * query's is at least `minCosine`, nearest first (then newest); [] without pgvector.
 */
export async function semanticLessons(db: Pool, shape: Shape, q: SemanticQuery): Promise<RecalledLesson[]> {
  if (!shape.vector) return [];
  const vector = embeddingParam(shape, q.embedding);
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    await c.query(`SET LOCAL hnsw.ef_search = ${EF_SEARCH}`);
    const r = await c.query<Row & { cosine: number }>(
      `SELECT ${COLUMNS}, (1 - (embedding <=> $2::vector))::float8 AS cosine FROM lessons
       WHERE embedding IS NOT NULL AND ${RECALLABLE} AND (repo = $1 OR scope = 'general')
       ORDER BY embedding <=> $2::vector, id DESC LIMIT $3`,
      [q.repo, vector, q.limit],
    );
    await c.query('COMMIT');
    return r.rows
      .map((row) => ({ ...toLesson(row), cosine: Number(row.cosine) }))
      .filter((l) => l.cosine >= q.minCosine)
      .map((l) => ({ ...l, similarity: l.cosine }));
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

/** Resolved, not forgotten lessons with no embedding, oldest first (the back-fill's work list). */
export async function unembeddedLessons(db: Pool, limit: number): Promise<UnembeddedLesson[]> {
  const r = await db.query<{ id: string; lesson: string | null; resolution: string | null }>(
    `SELECT id, lesson, resolution FROM lessons WHERE embedding IS NULL AND ${RECALLABLE}
     ORDER BY resolved_at, id LIMIT $1`,
    [limit],
  );
  return r.rows.map((x) => ({ id: Number(x.id), lesson: x.lesson, resolution: x.resolution }));
}

/** Writes one lesson's embedding (the column's type: vector or real[]). */
export async function setLessonEmbedding(db: Pool, shape: Shape, id: number, embedding: number[]): Promise<void> {
  const cast = shape.vector ? 'vector' : 'real[]';
  const res = await db.query(`UPDATE lessons SET embedding = $2::${cast} WHERE id = $1`, [
    id,
    embeddingParam(shape, embedding),
  ]);
  if (res.rowCount === 0) throw new Error(`no lesson ${id}`);
}
