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

/** The lessons columns a Lesson is read from (toLesson), in the one place they are listed. */
export const COLUMNS = `id, repo, ticket, signature, resolution, lesson, resolved_by, created_at, resolved_at,
  run_id, fingerprint, first_error, scope, forgotten_at`;

export interface Row {
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

export const toLesson = (r: Row): Lesson => ({
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

/** Spec mode's rule: word_similarity(coalesce(first_error, signature), spec) above it. */
export const SPEC_ABOVE = 0.6;

/**
 * Spec mode asks word_similarity(coalesce(first_error, signature), spec) > 0.6, which no trigram
 * index strategy answers with the lesson as the needle (`%>` and `<->>` put the query there).
 * pg_trgm's word_similarity (trgm_op.c, iterate_word_similarity) is, over extents of the spec,
 * the best c / (n + e - c): n the text's distinct trigrams, e the extent's, c those of the
 * extent's that are the text's. As e >= c it is at most c / n, and the extent's trigrams are
 * some of the spec's, so a text above 0.6 shares more than 0.6 n of its trigrams with the whole
 * spec (as show_trgm gives them, the same trigrams word_similarity makes). The
 * statement counts those shared trigrams per lesson on lesson_trgms (one index search per spec
 * trigram: the lessons that hold it), keeps the lessons that reach the bound (a hair under 0.6 n,
 * so float rounding of the score can never lose one), and scores only those, best first, then
 * newest; the caller keeps the rows above 0.6.
 */
export const SPEC_SQL = `SELECT ${COLUMNS}, word_similarity(coalesce(first_error, signature), $2)::float8 AS score
  FROM (SELECT t.lesson_id FROM lesson_trgms t WHERE t.trgm = ANY (show_trgm($2))
        GROUP BY t.lesson_id HAVING count(*) >= 0.999 * ${SPEC_ABOVE} * min(t.of)) c
  JOIN lessons ON lessons.id = c.lesson_id
  WHERE ${RECALLABLE} AND ${IN_SCOPE}
  ORDER BY score DESC, id DESC LIMIT $3`;

/** A similarity rule of failure and text mode: similarity(col, query) > above, on the lessons `also` keeps. */
export interface SimilarityRule {
  col: 'signature' | 'first_error';
  query: string;
  above: number;
  also: string;
}

/** The similarity rules of a failure- or text-mode recall (LexicalQuery). */
export function similarityRules(q: LexicalQuery): SimilarityRule[] {
  const bySignature = (also: string): SimilarityRule => ({ col: 'signature', query: q.query, above: 0.1, also });
  if (q.mode === 'text') return [bySignature('')];
  const rules: SimilarityRule[] = [];
  if (q.firstError)
    rules.push({ col: 'first_error', query: q.firstError, above: 0.5, also: 'AND first_error IS NOT NULL' });
  rules.push(bySignature('AND first_error IS NULL'));
  return rules;
}

/**
 * The two statements of a similarity rule, each with `%` at the rule's own bound (set by the
 * caller; `%` rechecks similarity >= it on each row, so it can be no stricter). `nearest`: the
 * texts of at most chalk_knn_trgms() trigrams in nearest-neighbour order on their GiST index
 * (`col <-> query` is 1 - similarity, so the best come first and the rest are never scored; $3
 * rows), the index skipping whole subtrees that cannot reach the bound. `long`: the longer texts
 * on their partial GIN index, and only those with n * b < m (n, m: the text's and the query's
 * distinct trigrams; similarity is at most m / n, so no other can pass b).
 */
export function similaritySql(r: SimilarityRule): { nearest: string; long: string } {
  const count = `${r.col}_trgms`;
  const select = `SELECT ${COLUMNS}, similarity(${r.col}, $2)::float8 AS score FROM lessons`;
  const where = `${r.col} % $2 AND ${RECALLABLE} AND ${IN_SCOPE} ${r.also}`;
  return {
    nearest: `${select} WHERE ${count} <= chalk_knn_trgms() AND ${where} ORDER BY ${r.col} <-> $2 LIMIT $3`,
    long: `${select} WHERE ${count} > chalk_knn_trgms() AND ${where}
           AND ${count} * ${r.above} < (SELECT coalesce(array_length(show_trgm($2), 1), 0))
           ORDER BY score DESC, id DESC LIMIT $3`,
  };
}

/** pg_trgm.similarity_threshold for the rest of the transaction. */
async function setThreshold(c: PoolClient, threshold: number): Promise<void> {
  await c.query(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(threshold)]);
}

/** Scores closer than this are treated as a possible tie (similarity is a float4). */
const TIE = 1e-6;

/** Best score first, then the newest id; at most `limit`. */
export const byScore = <T extends { similarity: number; id: number }>(rows: T[], limit: number): T[] =>
  [...rows].sort((a, b) => b.similarity - a.similarity || b.id - a.id).slice(0, limit);

/**
 * The best `limit` short texts of a similarity rule (`nearest`), exactly as `ORDER BY score DESC,
 * id DESC LIMIT limit` over all of them would give them. Nearest-neighbour order breaks no tie by
 * id, so one row more is read than kept: when the worst row read scores below the last kept (by
 * more than float rounding), no row left unread can tie with or beat a kept one. Otherwise (equal
 * scores at the edge) four times as many are read, and so on, until that holds or the rows run out.
 */
async function nearest(c: PoolClient, q: LexicalQuery, r: SimilarityRule): Promise<RecalledLesson[]> {
  const sql = similaritySql(r).nearest;
  await setThreshold(c, r.above);
  for (let n = q.limit + 1; ; n *= 4) {
    const rows = byScore(recalled((await c.query<Row & { score: number }>(sql, [q.repo, r.query, n])).rows), n);
    const edge = rows[q.limit - 1];
    const last = rows[n - 1];
    if (!edge || !last || last.similarity < edge.similarity - TIE) return rows.slice(0, q.limit);
  }
}

/** The best `limit` long texts of a similarity rule (`long`). */
async function longest(c: PoolClient, q: LexicalQuery, r: SimilarityRule): Promise<RecalledLesson[]> {
  await setThreshold(c, r.above);
  return recalled((await c.query<Row & { score: number }>(similaritySql(r).long, [q.repo, r.query, q.limit])).rows);
}

/**
 * The long texts' statements search a GIN index with a long query's many trigrams, which Postgres
 * prices above reading the whole table (at 10,000 lessons it read them all, 117 ms, where the
 * index took 12 ms), and spec mode's statement, once lesson_trgms is analysed, joins its few
 * candidates to a sequential scan of lessons rather than to their primary key; so for them,
 * within the recall's transaction only, a sequential scan is priced out. The nearest-neighbour
 * statements run before it: their GiST index is the plan Postgres picks on its own.
 */
const PLANNER = 'SET LOCAL enable_seqscan = off';

/** The lexical rung (see LexicalQuery); [] without pg_trgm. */
export async function lexicalLessons(db: Pool, shape: Shape, q: LexicalQuery): Promise<RecalledLesson[]> {
  if (!shape.trgm || q.query.trim() === '') return [];
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    const found: RecalledLesson[] = [];
    if (q.mode === 'spec') {
      await c.query(PLANNER);
      const r = await c.query<Row & { score: number }>(SPEC_SQL, [q.repo, q.query, q.limit]);
      found.push(...recalled(r.rows).filter((l) => l.similarity > SPEC_ABOVE));
    } else {
      const rules = similarityRules(q);
      const kept = (r: SimilarityRule, ls: RecalledLesson[]) => ls.filter((l) => l.similarity > r.above);
      for (const rule of rules) found.push(...kept(rule, await nearest(c, q, rule)));
      await c.query(PLANNER);
      for (const rule of rules) found.push(...kept(rule, await longest(c, q, rule)));
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
    if (!shape.trgm) {
      // No lexical rung without pg_trgm (lexicalLessons finds nothing), so no lexical plans.
    } else if (q.mode === 'spec') {
      await c.query(PLANNER);
      plans.push({ rung: 'lexical', plan: await explain(SPEC_SQL, [q.repo, q.query, q.limit]) });
    } else {
      const rules = similarityRules(q);
      for (const rule of rules) {
        await setThreshold(c, rule.above);
        plans.push({
          rung: 'lexical',
          plan: await explain(similaritySql(rule).nearest, [q.repo, rule.query, q.limit + 1]),
        });
      }
      await c.query(PLANNER);
      for (const rule of rules) {
        await setThreshold(c, rule.above);
        plans.push({ rung: 'lexical', plan: await explain(similaritySql(rule).long, [q.repo, rule.query, q.limit]) });
      }
    }
    await c.query('ROLLBACK');
    return plans;
  } finally {
    c.release();
  }
}
