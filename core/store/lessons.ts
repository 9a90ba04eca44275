import type { Pool, PoolClient } from 'pg';
import type {
  ExactQuery,
  Lesson,
  LessonListed,
  LessonOpen,
  LessonResolve,
  LessonScope,
  LexicalQuery,
  RecalledLesson,
  RecallsRecord,
} from '../ports/store.js';
import { embeddingParam, type Shape } from './shape.js';

const COLUMNS = `id, repo, ticket, signature, resolution, lesson, resolved_by, created_at, resolved_at,
  run_id, fingerprint, first_error, scope, forgotten_at`;

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
  forgotten_at: Date | null;
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
  forgottenAt: r.forgotten_at,
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

/** What every recall rung searches: resolved, not forgotten lessons. */
const RECALLABLE = `resolved_at IS NOT NULL AND forgotten_at IS NULL`;
/** The scope rule: this repository's lessons, and `general` ones from anywhere. */
const IN_SCOPE = `(repo = $1 OR scope = 'general')`;
const L_COLUMNS = COLUMNS.replace(/(\w+)/g, 'l.$1');

const recalled = (rows: Array<Row & { score: number }>): RecalledLesson[] =>
  rows.map((r) => ({ ...toLesson(r), similarity: Number(r.score), cosine: null }));

/** The exact rung: same repository, same fingerprint (lessons_fingerprint_idx), newest first. */
export async function exactLessons(db: Pool, q: ExactQuery): Promise<RecalledLesson[]> {
  if (q.fingerprint === '') return [];
  const r = await db.query<Row & { score: number }>(
    `SELECT ${COLUMNS}, 1::float8 AS score FROM lessons
     WHERE repo = $1 AND fingerprint = $2 AND ${RECALLABLE}
     ORDER BY id DESC LIMIT $3`,
    [q.repo, q.fingerprint, q.limit],
  );
  return recalled(r.rows);
}

/** One lexical statement: its trigram threshold, its query, and the score a row must beat. */
interface TrigramPart {
  /** pg_trgm.similarity_threshold for the statement, so `%` prefilters on a GIN index: a number, or SQL over $1 (the query). */
  threshold: number | string;
  sql: string;
  params: unknown[];
  /** The rule's own bound: a row is recalled when its score is above it (checked on the few rows the LIMIT keeps). */
  above: number;
}

/**
 * The statements of one lexical recall, each filtering with `%` on a trigram GIN index (the
 * threshold set with set_config(..., true), for the transaction only), ordered by its score, best
 * first, then newest; the caller keeps the rows above the rule's bound. Since the rows come best
 * first, dropping those at or under the bound after the LIMIT loses nothing.
 *
 * Spec mode asks word_similarity(coalesce(first_error, signature), spec) > 0.6, which no GIN
 * strategy answers with the lesson as the needle (`%>` puts the query there). Word similarity
 * above 0.6 means more than 0.6 of the lesson's n distinct trigrams are among the spec's m, so
 * similarity(lesson, spec) > 0.6n / (0.4n + m), a bound that grows with n. So the lessons are
 * searched band by band of n (recall_trgms, each band with its own partial GIN index,
 * chalk_spec_bands()), each band with `%` at the bound of its floor: the strictest threshold that
 * cannot lose a match, and strict enough that few rows reach the costly word_similarity.
 */
export function lexicalParts(q: LexicalQuery, specBands: readonly number[]): TrigramPart[] {
  const order = `ORDER BY score DESC, id DESC LIMIT $3`;
  const params = [q.repo, q.query, q.limit];
  const bySignature = (also: string): TrigramPart => ({
    threshold: 0.1,
    sql: `SELECT ${COLUMNS}, similarity(signature, $2)::float8 AS score FROM lessons
          WHERE signature % $2 ${also} AND ${RECALLABLE} AND ${IN_SCOPE}
          ${order}`,
    params,
    above: 0.1,
  });
  if (q.mode === 'spec') {
    return specBands.map((floor, i) => {
      const next = specBands[i + 1];
      if (!Number.isInteger(floor) || (next !== undefined && !Number.isInteger(next))) {
        throw new Error(`chalk_spec_bands() holds a value that is not a whole number: ${specBands.join(', ')}`);
      }
      const band = `recall_trgms >= ${floor}${next === undefined ? '' : ` AND recall_trgms < ${next}`}`;
      return {
        threshold: `least(1, 0.999 * 0.6 * ${floor} / (0.4 * ${floor} + coalesce(array_length(show_trgm($1), 1), 0)))::text`,
        sql: `SELECT ${COLUMNS}, word_similarity(coalesce(first_error, signature), $2)::float8 AS score FROM lessons
              WHERE coalesce(first_error, signature) % $2 AND ${band} AND ${RECALLABLE} AND ${IN_SCOPE}
              ${order}`,
        params,
        above: 0.6,
      };
    });
  }
  if (q.mode === 'text') return [bySignature('')];
  const parts: TrigramPart[] = [];
  if (q.firstError) {
    parts.push({
      threshold: 0.5,
      sql: `SELECT ${COLUMNS}, similarity(first_error, $2)::float8 AS score FROM lessons
            WHERE first_error % $2 AND ${RECALLABLE} AND ${IN_SCOPE}
            ${order}`,
      params: [q.repo, q.firstError, q.limit],
      above: 0.5,
    });
  }
  parts.push(bySignature('AND first_error IS NULL'));
  return parts;
}

/** Best score first, then the newest id; at most `limit`. */
export const byScore = <T extends { similarity: number; id: number }>(rows: T[], limit: number): T[] =>
  [...rows].sort((a, b) => b.similarity - a.similarity || b.id - a.id).slice(0, limit);

/**
 * Every lexical statement has a `%` condition a trigram index answers, but Postgres prices a GIN
 * scan of a long query's many trigrams above reading the whole table: at 10,000 lessons it read
 * them all (117 ms) where the index took 12 ms. Within the recall's transaction only, a
 * sequential scan is priced out, so the index is used whenever one applies.
 */
const PLANNER = 'SET LOCAL enable_seqscan = off';

/** pg_trgm.similarity_threshold for the rest of the transaction. */
async function setThreshold(c: PoolClient, part: TrigramPart): Promise<void> {
  if (typeof part.threshold === 'number') {
    await c.query(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(part.threshold)]);
  } else {
    await c.query(`SELECT set_config('pg_trgm.similarity_threshold', ${part.threshold}, true)`, [part.params[1]]);
  }
}

/** The lexical rung (see LexicalQuery); [] without pg_trgm. */
export async function lexicalLessons(db: Pool, shape: Shape, q: LexicalQuery): Promise<RecalledLesson[]> {
  if (!shape.trgm || q.query.trim() === '') return [];
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    await c.query(PLANNER);
    const found: RecalledLesson[] = [];
    for (const part of lexicalParts(q, shape.specBands)) {
      await setThreshold(c, part);
      const r = await c.query<Row & { score: number }>(part.sql, part.params);
      found.push(...recalled(r.rows).filter((l) => l.similarity > part.above));
    }
    await c.query('COMMIT');
    return byScore(found, q.limit);
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

/** Records the lessons a loop was given (one lesson_recalls row each). */
export async function recordRecalls(db: Pool, r: RecallsRecord): Promise<void> {
  if (r.lessons.length === 0) return;
  await db.query(
    `INSERT INTO lesson_recalls (call_id, run_id, loop, lesson_id, how)
     SELECT $1, $2, $3, x.lesson_id, x.how FROM unnest($4::bigint[], $5::text[]) AS x(lesson_id, how)`,
    [r.callId, r.runId, r.loop, r.lessons.map((l) => l.lessonId), r.lessons.map((l) => l.how)],
  );
}

const LISTED = `SELECT ${L_COLUMNS},
    (SELECT count(*) FROM lesson_recalls r WHERE r.lesson_id = l.id) AS recalled,
    (SELECT count(*) FROM lesson_recalls r JOIN runs c ON c.id = r.call_id
      WHERE r.lesson_id = l.id AND c.progressed) AS passed
  FROM lessons l`;

const toListed = (r: Row & { recalled: string; passed: string }): LessonListed => ({
  ...toLesson(r),
  recalled: Number(r.recalled),
  passed: Number(r.passed),
});

export async function listLessons(db: Pool, q: { repo?: string | null }): Promise<LessonListed[]> {
  const r = await db.query<Row & { recalled: string; passed: string }>(
    q.repo
      ? `${LISTED} WHERE (l.repo = $1 OR l.scope = 'general') AND l.resolved_at IS NOT NULL AND l.forgotten_at IS NULL
         ORDER BY l.id DESC`
      : `${LISTED} ORDER BY l.id DESC`,
    q.repo ? [q.repo] : [],
  );
  return r.rows.map(toListed);
}

export async function getLesson(db: Pool, id: number): Promise<LessonListed | null> {
  const r = await db.query<Row & { recalled: string; passed: string }>(`${LISTED} WHERE l.id = $1`, [id]);
  return r.rows[0] ? toListed(r.rows[0]) : null;
}

export async function setLessonScope(db: Pool, id: number, scope: LessonScope): Promise<boolean> {
  const r = await db.query(`UPDATE lessons SET scope = $2 WHERE id = $1`, [id, scope]);
  return (r.rowCount ?? 0) > 0;
}

export async function forgetLesson(db: Pool, id: number): Promise<boolean> {
  const r = await db.query(`UPDATE lessons SET forgotten_at = coalesce(forgotten_at, now()) WHERE id = $1`, [id]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * The query plans of one recall (EXPLAIN, not run): the exact rung's statement and each lexical
 * statement under its own trigram threshold, as Postgres would run them now. For the plan test
 * and bench/recall.mjs.
 */
export async function explainRecall(
  db: Pool,
  shape: Shape,
  q: LexicalQuery & { fingerprint: string | null },
): Promise<Array<{ rung: 'exact' | 'lexical'; plan: string }>> {
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    const plans: Array<{ rung: 'exact' | 'lexical'; plan: string }> = [];
    const explain = async (sql: string, params: unknown[]) =>
      (await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n');
    if (q.fingerprint) {
      plans.push({
        rung: 'exact',
        plan: await explain(
          `SELECT ${COLUMNS} FROM lessons WHERE repo = $1 AND fingerprint = $2 AND ${RECALLABLE} ORDER BY id DESC LIMIT $3`,
          [q.repo, q.fingerprint, q.limit],
        ),
      });
    }
    await c.query(PLANNER);
    for (const part of lexicalParts(q, shape.specBands)) {
      await setThreshold(c, part);
      plans.push({ rung: 'lexical', plan: await explain(part.sql, part.params) });
    }
    await c.query('ROLLBACK');
    return plans;
  } finally {
    c.release();
  }
}
