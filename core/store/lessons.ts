import type { Pool } from 'pg';
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
import { type BitsRow, LessonBits, type SlotCounts, similarityOf } from './lesson-bits.js';
import { embeddingParam, type Shape } from './shape.js';
import { anchorsReach, isAscii, rankSpec, SPEC_ABOVE, type SpecCandidate, SpecTrigrams } from './spec-rank.js';
import { trigramSequence } from './trigram.js';

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

/** A rule of the lexical rung: `col`'s similarity to `query` above `above`, over the lessons `first` keeps. */
export interface LexicalRule {
  col: 'signature' | 'first_error';
  /** Which of the fetched query texts the rule counts against (0: the first, 1: the second). */
  set: 0 | 1;
  query: string;
  above: number;
  first: 'with' | 'without' | 'any';
}

/** What one recall fetches and asks: the bitmaps' family and its query texts, and the rules. */
export interface LexicalPlan {
  /** 's': signature trigrams, with their counts in planes 'n'; 'c': coalesce(first_error, signature), planes 'm'. */
  family: 's' | 'c';
  texts: [string, string | null];
  rules: LexicalRule[];
}

/**
 * The rules of a failure- or text-mode recall (LexicalQuery): failure mode's similarity(first_error,
 * E) > 0.5 on lessons with a first error and similarity(signature, query) > 0.1 on those without
 * (whose coalesce(first_error, signature) is the signature, so both count on family 'c'); text
 * mode's similarity(signature, feedback) > 0.1. Spec mode has its own way (specLessons).
 */
export function lexicalPlan(q: LexicalQuery & { mode: 'failure' | 'text' }): LexicalPlan {
  if (q.mode === 'text')
    return {
      family: 's',
      texts: [q.query, null],
      rules: [{ col: 'signature', set: 0, query: q.query, above: 0.1, first: 'any' }],
    };
  const rules: LexicalRule[] = [{ col: 'signature', set: 1, query: q.query, above: 0.1, first: 'without' }];
  if (q.firstError) rules.unshift({ col: 'first_error', set: 0, query: q.firstError, above: 0.5, first: 'with' });
  return { family: 'c', texts: [q.firstError ?? '', q.query], rules };
}

/**
 * A row's lessons as the fetch sends them (`alias`: lesson_bits or lesson_spec_anchors): its list,
 * or its bitmap cut after the byte of the newest lesson's slot (a chunk's later slots hold no
 * lesson yet, so the last chunk's bitmaps are sent only as far as it is filled); and its `lens`
 * entry: the list's length in bytes, or minus the bitmap's.
 */
const USED = (a: string) =>
  `least(1024, greatest(1, (((SELECT coalesce(max(id), 0) FROM lessons) - ${a}.chunk::bigint * 8192) >> 3) + 1))::int`;
const rowData = (a: string) => `coalesce(${a}.list, substring(bit_send(${a}.bits) FROM 5 FOR ${USED(a)}))`;
const rowLen = (a: string) => `CASE WHEN ${a}.bits IS NULL THEN length(${a}.list) ELSE -${USED(a)} END`;

/**
 * One statement reads what a recall needs from lesson_bits, by primary key (one index scan for all
 * the trigrams: their array is a subquery's, whose length the planner does not guess, so it never
 * prefers joining them to the whole family by hash, as it did on a database never analysed, as
 * PGlite's is): the bitmap of each
 * trigram of the query texts in the family ($1), per chunk in one value (`data`, base64: each row's
 * list or bitmap in turn, `lens` as rowLen gives it, `sets` which texts
 * have the trigram: bit 0 the first, $2, bit 1 the second, $3; the aggregates of one group see its
 * rows in one order); the family's trigram-count planes and the flags ($4) and the repository's
 * lessons ($5), a row each (`name` kind:name); and each text's count of distinct trigrams (the row
 * without a chunk, `sets`).
 */
export const BITS_SQL = `WITH q AS (
    SELECT t, bit_or(w) AS w FROM (SELECT unnest(show_trgm($2)) AS t, 1 AS w
                                   UNION ALL SELECT unnest(show_trgm($3)), 2) x GROUP BY t),
  t AS (SELECT q.w, b.chunk, ${rowData('b')} AS data, ${rowLen('b')} AS len
        FROM lesson_bits b JOIN q ON q.t = b.name WHERE b.kind = $1 AND b.name = ANY (ARRAY(SELECT t FROM q)))
  SELECT chunk, array_agg(w) AS sets, array_agg(len) AS lens, NULL::text[] AS names,
         encode(string_agg(data, ''::bytea), 'base64') AS data, NULL AS name
    FROM t GROUP BY chunk
  UNION ALL ${flagsSql('$4::text[]', '$5')}
  UNION ALL SELECT NULL, ARRAY[(SELECT count(*) FROM q WHERE w & 1 = 1)::int, (SELECT count(*) FROM q WHERE w & 2 = 2)::int],
         NULL, NULL, NULL, NULL`;

/** The rows of planes and flags (`kinds`) and of the repository's lessons (`repo`), one each, as BITS_SQL reads them. */
function flagsSql(kinds: string, repo: string): string {
  return `SELECT b.chunk, NULL, ARRAY[${rowLen('b')}], NULL, encode(${rowData('b')}, 'base64'), b.kind || ':' || b.name
    FROM lesson_bits b WHERE b.kind = ANY (${kinds}) OR (b.kind = 'p' AND b.name = ${repo})`;
}

interface BitsResult {
  chunk: number | null;
  sets: number[] | null;
  lens: number[];
  names: string[] | null;
  /** base64 */
  data: string | null;
  name: string | null;
}

/** The fetch's rows as BitsRows (views into each chunk's data), each text's trigram count, and the names of the row without a chunk. */
export function bitsRows(result: readonly BitsResult[]): { rows: BitsRow[]; m: [number, number]; trigrams: string[] } {
  const rows: BitsRow[] = [];
  let m: [number, number] = [0, 0];
  let trigrams: string[] = [];
  const piece = (data: Buffer, at: number, len: number) => {
    if (len >= 0) return { list: data.subarray(at, at + len), bits: null };
    const bits = new Uint8Array(1024);
    bits.set(data.subarray(at, at - len));
    return { list: null, bits };
  };
  for (const r of result) {
    const data = Buffer.from(r.data ?? '', 'base64');
    if (r.chunk === null) {
      m = [Number(r.sets?.[0] ?? 0), Number(r.sets?.[1] ?? 0)];
      trigrams = r.names ?? [];
    } else if (r.name !== null) {
      const [kind, ...rest] = r.name.split(':');
      rows.push({
        sets: 0,
        kind: kind as string,
        name: rest.join(':'),
        chunk: Number(r.chunk),
        ...piece(data, 0, Number(r.lens[0])),
      });
    } else {
      let at = 0;
      (r.sets ?? []).forEach((sets, i) => {
        const len = Number(r.lens[i]);
        rows.push({
          sets: Number(sets),
          kind: '',
          name: r.names?.[i] ?? '',
          chunk: Number(r.chunk),
          ...piece(data, at, len),
        });
        at += Math.abs(len);
      });
    }
  }
  return { rows, m, trigrams };
}

/** The rows of a rule's candidates ($3), each with the rule's own score, checked against the rule's lessons again. */
export function scoredSql(r: LexicalRule): string {
  const first =
    r.first === 'with' ? 'AND first_error IS NOT NULL' : r.first === 'without' ? 'AND first_error IS NULL' : '';
  return `SELECT ${COLUMNS}, similarity(${r.col}, $2)::float8 AS score FROM lessons
    WHERE id = ANY ($3::bigint[]) AND ${RECALLABLE} AND ${IN_SCOPE} ${first}`;
}

/** Scores closer than this are treated as a possible tie (similarity is a float4). */
const TIE = 1e-6;

/** Best score first, then the newest id; at most `limit`. */
export const byScore = <T extends { similarity: number; id: number }>(rows: T[], limit: number): T[] =>
  [...rows].sort((a, b) => b.similarity - a.similarity || b.id - a.id).slice(0, limit);

/** A rule's candidates, best first (then newest), each with its score from the counts. */
export interface Ranked {
  ids: number[];
  scores: number[];
}

/**
 * A similarity rule's candidates from the counts: its score is exact from them (similarityOf),
 * so every lesson above the bound (a hair under it, so that no rounding loses one), best first.
 */
export function rankSimilar(rule: LexicalRule, counts: SlotCounts, m: number): Ranked {
  const shared = counts.shared[rule.set];
  const want = rule.first === 'with' ? 1 : rule.first === 'without' ? 0 : -1;
  const kept: Array<{ id: number; score: number }> = [];
  counts.ids.forEach((id, i) => {
    if (want >= 0 && counts.withFirstError[i] !== want) return;
    const score = similarityOf(shared[i] as number, counts.n[i] as number, m);
    if (score > rule.above - TIE) kept.push({ id, score });
  });
  kept.sort((a, b) => b.score - a.score || b.id - a.id);
  return { ids: kept.map((k) => k.id), scores: kept.map((k) => k.score) };
}

const planeKinds = (p: LexicalPlan) => [p.family === 's' ? 'n' : 'm', 'r', 'g', 'e'];

/**
 * A rule's lessons from its candidates: the best `limit` by the counts' scores, scored by
 * pg_trgm on their rows; when those rows do not give the same scores, every candidate is scored on
 * its row. Best score first, then newest; above the bound.
 */
async function scoreRule(c: Pool, q: LexicalQuery, rule: LexicalRule, ranked: Ranked): Promise<RecalledLesson[]> {
  const score = async (ids: number[]) =>
    recalled((await c.query<Row & { score: number }>(scoredSql(rule), [q.repo, rule.query, ids])).rows);
  const keep = (ls: RecalledLesson[]) => byScore(ls, q.limit).filter((l) => l.similarity > rule.above);
  if (ranked.ids.length === 0) return [];
  const pick = ranked.ids.slice(0, q.limit);
  const rows = await score(pick);
  const expected = new Map(pick.map((id, i) => [id, ranked.scores[i]]));
  if (rows.length === pick.length && rows.every((l) => expected.get(l.id) === l.similarity)) return keep(rows);
  return keep(await score(ranked.ids));
}

/**
 * The lexical rung (see LexicalQuery); [] without pg_trgm. Failure and text mode: the bitmaps,
 * each rule's candidates ranked by them, and the best scored by pg_trgm on their rows, which the
 * scoring statement checks against the rule again (a lesson forgotten in between is not recalled;
 * when the rows and the counts disagree, every candidate is scored on its row). Spec mode:
 * specLessons.
 */
export async function lexicalLessons(db: Pool, shape: Shape, q: LexicalQuery): Promise<RecalledLesson[]> {
  if (!shape.trgm || q.query.trim() === '') return [];
  if (q.mode === 'spec') return specLessons(db, shape, q);
  const plan = lexicalPlan({ ...q, mode: q.mode });
  const result = (await db.query<BitsResult>(BITS_SQL, [plan.family, ...plan.texts, planeKinds(plan), q.repo])).rows;
  const { rows, m } = bitsRows(result);
  const counts = new LessonBits(rows, planeKinds(plan)[0] as string).counts();
  const found: RecalledLesson[] = [];
  for (const rule of plan.rules) found.push(...(await scoreRule(db, q, rule, rankSimilar(rule, counts, m[rule.set]))));
  return byScore(found, q.limit);
}

/**
 * Spec mode's first statement: per chunk, the lesson_spec_anchors rows of the spec's trigrams (one
 * index scan, as BITS_SQL's; $1,
 * as core/store/trigram.ts makes them, when they are Postgres's; else show_trgm($3)), as BITS_SQL
 * reads a family's; the trigram-count planes 'm', the flags and the repository's lessons ($2); and
 * Postgres's trigrams of the spec when $1 is null (`names` of the row without a chunk).
 */
export const SPEC_SQL = `SELECT a.chunk, array_agg(1) AS sets, array_agg(${rowLen('a')}) AS lens,
         NULL::text[] AS names, encode(string_agg(${rowData('a')}, ''::bytea), 'base64') AS data, NULL AS name
    FROM lesson_spec_anchors a WHERE a.name = ANY (ARRAY(SELECT unnest(coalesce($1::text[], show_trgm($3)))))
    GROUP BY a.chunk
  UNION ALL ${flagsSql(`'{m,r,g}'::text[]`, '$2')}
  UNION ALL SELECT NULL, NULL, NULL, show_trgm($3), NULL, NULL WHERE $1::text[] IS NULL`;

const SPEC_TEXT = 'coalesce(first_error, signature)';

/**
 * Spec mode's second statement: the candidates' ($2) texts, checked against the rule's lessons
 * again, with Postgres's trigrams of a text beyond ASCII (`trgms`).
 */
export const SPEC_TEXTS_SQL = `SELECT id, ${SPEC_TEXT} AS text,
    CASE WHEN octet_length(${SPEC_TEXT}) <> char_length(${SPEC_TEXT}) THEN show_trgm(${SPEC_TEXT}) END AS trgms
  FROM lessons WHERE id = ANY ($2::bigint[]) AND ${RECALLABLE} AND ${IN_SCOPE}`;

/** Spec mode's last statement: the best lessons' ($2) rows, checked against the rule's lessons again. */
export const SPEC_ROWS_SQL = `SELECT ${COLUMNS} FROM lessons WHERE id = ANY ($2::bigint[]) AND ${RECALLABLE} AND ${IN_SCOPE}`;

/** Candidates whose texts only Postgres can read ($2, the spec; $3 their ids), scored by pg_trgm on their rows. */
export const SPEC_SCORED_SQL = `SELECT ${COLUMNS}, word_similarity(${SPEC_TEXT}, $2)::float8 AS score FROM lessons
  WHERE id = ANY ($3::bigint[]) AND ${RECALLABLE} AND ${IN_SCOPE}`;

/**
 * Spec mode: word_similarity(coalesce(first_error, signature), spec) > 0.6 (schema 10's anchors).
 * One statement reads the anchors of the spec's trigrams (SPEC_SQL), and each recallable lesson in
 * scope whose anchors reach their count (anchorsReach) is a candidate; a second reads the
 * candidates' texts, which core/store/spec-rank.ts ranks (bounds first, pg_trgm's own extent search
 * on the few that can place) when core/store/trigram.ts makes Postgres's trigrams of the spec and the
 * texts (the shape's probe and ASCII, or the spec's trigrams the same as show_trgm's and Postgres's
 * trigrams of a text beyond ASCII); a third reads the best rows, checked against the rule again. A
 * candidate the JavaScript cannot read is scored by pg_trgm on its row, and a lesson forgotten,
 * moved out of scope or changed while it was ranked is left out.
 */
export async function specLessons(db: Pool, shape: Shape, q: LexicalQuery): Promise<RecalledLesson[]> {
  const { seq, unique } = trigramSequence(q.query);
  const trusted = shape.asciiTrigrams && isAscii(q.query);
  const result = (await db.query<BitsResult>(SPEC_SQL, [trusted ? unique : null, q.repo, q.query])).rows;
  const { rows, trigrams } = bitsRows(result);
  const exact = shape.asciiTrigrams && (trusted || sameSet(unique, trigrams));
  const counts = new LessonBits(rows, 'm').counts();
  const ids = counts.ids.filter((_, i) => anchorsReach(counts.shared[0][i] as number, counts.n[i] as number));
  if (ids.length === 0) return [];
  const texts = (await db.query<{ id: string; text: string; trgms: string[] | null }>(SPEC_TEXTS_SQL, [q.repo, ids]))
    .rows;
  const spec = new SpecTrigrams(unique);
  const read = new Map<number, { text: string; candidate: SpecCandidate }>();
  const onRows: number[] = [];
  for (const r of texts) {
    const id = Number(r.id);
    const has = !exact ? null : isAscii(r.text) ? spec.ascii(r.text) : r.trgms ? spec.of(r.trgms) : null;
    if (has) read.set(id, { text: r.text, candidate: { id, ...has } });
    else onRows.push(id);
  }
  const byPg =
    onRows.length === 0
      ? []
      : recalled((await db.query<Row & { score: number }>(SPEC_SCORED_SQL, [q.repo, q.query, onRows])).rows).filter(
          (l) => l.similarity > SPEC_ABOVE,
        );
  for (;;) {
    const top = rankSpec(
      seq,
      unique.length,
      [...read.values()].map((r) => r.candidate),
      q.limit,
    );
    if (top.length === 0) return byScore(byPg, q.limit);
    const got = new Map(
      (await db.query<Row>(SPEC_ROWS_SQL, [q.repo, top.map((t) => t.id)])).rows.map((r) => [Number(r.id), r]),
    );
    const gone = top.filter((t) => {
      const r = got.get(t.id);
      return !r || (r.first_error ?? r.signature) !== read.get(t.id)?.text;
    });
    if (gone.length === 0) {
      const mine = top.map((t) => ({ ...toLesson(got.get(t.id) as Row), similarity: t.score, cosine: null }));
      return byScore([...mine, ...byPg], q.limit);
    }
    for (const t of gone) read.delete(t.id);
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const x = new Set(a);
  return x.size === new Set(b).size && b.every((t) => x.has(t));
};

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
 * The query plans of one recall (EXPLAIN, not run): the exact rung's statement, the bitmaps'
 * statement and each rule's scoring statement (for candidates `ids`); in spec mode its anchors'
 * statement, and its texts', rows' and scoring statements for candidates `ids`; as Postgres would
 * run them now. For the plan test and bench/recall.mjs.
 */
export async function explainRecall(
  db: Pool,
  shape: Shape,
  q: LexicalQuery & { fingerprint: string | null },
  ids: number[] = [1, 2, 3],
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
    if (shape.trgm && q.mode === 'spec') {
      const { unique } = trigramSequence(q.query);
      const trusted = shape.asciiTrigrams && isAscii(q.query);
      plans.push({ rung: 'lexical', plan: await explain(SPEC_SQL, [trusted ? unique : null, q.repo, q.query]) });
      for (const sql of [SPEC_TEXTS_SQL, SPEC_ROWS_SQL])
        plans.push({ rung: 'lexical', plan: await explain(sql, [q.repo, ids]) });
      plans.push({ rung: 'lexical', plan: await explain(SPEC_SCORED_SQL, [q.repo, q.query, ids]) });
    } else if (shape.trgm && q.mode !== 'spec') {
      const plan = lexicalPlan({ ...q, mode: q.mode });
      plans.push({
        rung: 'lexical',
        plan: await explain(BITS_SQL, [plan.family, ...plan.texts, planeKinds(plan), q.repo]),
      });
      for (const rule of plan.rules)
        plans.push({ rung: 'lexical', plan: await explain(scoredSql(rule), [q.repo, rule.query, ids]) });
    }
    await c.query('ROLLBACK');
    return plans;
  } finally {
    c.release();
  }
}
