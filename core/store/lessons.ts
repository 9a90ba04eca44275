import type { Pool } from 'pg';
import type { Lesson, LessonOpen, LessonResolve, RecalledLesson, RecallQuery } from '../ports/store.js';
import { embeddingParam, type Shape } from './shape.js';

const COLUMNS = `id, repo, ticket, signature, resolution, lesson, resolved_by, created_at, resolved_at,
  run_id, fingerprint, first_error, scope`;

interface Row {
  id: string;
  repo: string;
  ticket: string;
  signature: string;
  resolution: string | null;
  lesson: string | null;
  resolved_by: string | null;
  created_at: Date;
  resolved_at: Date | null;
  run_id: string | null;
  fingerprint: string | null;
  first_error: string | null;
  scope: string | null;
}

const toLesson = (r: Row): Lesson => ({
  id: Number(r.id),
  repo: r.repo,
  ticket: r.ticket,
  signature: r.signature,
  resolution: r.resolution,
  lesson: r.lesson,
  resolvedBy: r.resolved_by,
  createdAt: r.created_at,
  resolvedAt: r.resolved_at,
  runId: r.run_id,
  fingerprint: r.fingerprint,
  firstError: r.first_error,
  scope: r.scope,
});

const empty = (v: string | null | undefined) => (v ? v : null);

/** Opens a lesson for a detention; returns its id. */
export async function openLesson(db: Pool, l: LessonOpen): Promise<number> {
  const r = await db.query<{ id: string }>(
    `INSERT INTO lessons (repo, ticket, signature, run_id, fingerprint, first_error)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [l.repo, l.ticket, l.signature, empty(l.runId), empty(l.fingerprint), empty(l.firstError)],
  );
  return Number(r.rows[0]?.id);
}

/** Resolves a lesson (office hours). Resolving twice keeps the newest resolution. */
export async function resolveLesson(db: Pool, shape: Shape, r: LessonResolve): Promise<void> {
  const embedding = r.embedding ? embeddingParam(shape, r.embedding) : null;
  const cast = shape.vector ? 'vector' : 'real[]';
  const res = await db.query(
    `UPDATE lessons SET resolution = $2, lesson = $3, resolved_by = $4, scope = $5,
       embedding = COALESCE($6::${cast}, embedding), resolved_at = now()
     WHERE id = $1`,
    [r.id, r.resolution, r.lesson, r.resolvedBy, r.scope ?? null, embedding],
  );
  if (res.rowCount === 0) throw new Error(`no lesson ${r.id}`);
}

export async function openByFingerprint(
  db: Pool,
  repo: string,
  fingerprint: string,
  exceptTicket?: string,
): Promise<Lesson[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM lessons
     WHERE repo = $1 AND fingerprint = $2 AND resolved_at IS NULL AND ($3::text IS NULL OR ticket <> $3)
     ORDER BY created_at DESC, id DESC`,
    [repo, fingerprint, exceptTicket ?? null],
  );
  return r.rows.map(toLesson);
}

/**
 * Resolved lessons of the repository (and general ones) nearest the query: the union of the
 * trigram shortlist (signature or first error like the text) and, with pgvector and an
 * embedding, the cosine shortlist; ranked by the better of the two similarities.
 */
export async function recallLessons(db: Pool, shape: Shape, q: RecallQuery): Promise<RecalledLesson[]> {
  const limit = q.limit ?? 5;
  const params: unknown[] = [q.repo, q.text, limit];
  const scope = `resolved_at IS NOT NULL AND (repo = $1 OR scope = 'general')`;
  const parts: string[] = [];
  const sim = shape.trgm
    ? `GREATEST(similarity(l.signature, $2), COALESCE(similarity(l.first_error, $2), 0))`
    : `0::real`;
  if (shape.trgm) {
    parts.push(`(SELECT id FROM lessons l WHERE ${scope} AND (l.signature % $2 OR l.first_error % $2)
      ORDER BY ${sim} DESC LIMIT $3)`);
  }
  let cos = 'NULL::float8';
  if (shape.vector && q.embedding) {
    params.push(embeddingParam(shape, q.embedding));
    parts.push(`(SELECT id FROM lessons WHERE ${scope} AND embedding IS NOT NULL
      ORDER BY embedding <=> $4::vector LIMIT $3)`);
    cos = `CASE WHEN l.embedding IS NULL THEN NULL ELSE 1 - (l.embedding <=> $4::vector) END`;
  }
  if (parts.length === 0) return [];
  const r = await db.query<Row & { sim: number; cos: number | null }>(
    `WITH cand AS (${parts.join(' UNION ')})
     SELECT ${COLUMNS.replace(/(\w+)/g, 'l.$1')}, (${sim})::float8 AS sim, (${cos})::float8 AS cos
     FROM lessons l JOIN cand USING (id)
     ORDER BY GREATEST((${sim})::float8, COALESCE((${cos})::float8, 0)) DESC, l.id DESC
     LIMIT $3`,
    params,
  );
  return r.rows.map((row) => ({
    ...toLesson(row),
    similarity: Number(row.sim),
    cosine: row.cos === null ? null : Number(row.cos),
  }));
}
