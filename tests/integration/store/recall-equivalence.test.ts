import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LexicalQuery } from '../../../core/ports/store.js';
import { PgStore } from '../../../core/store/index.js';
import { SPEC_ROWS_SQL, specLessons } from '../../../core/store/lessons.js';
import { readShape } from '../../../core/store/shape.js';
import { anchorCount, isAscii } from '../../../core/store/spec-rank.js';
import { BACKENDS } from './backends.js';

/**
 * The lexical rung on the bitmaps (core/store/lesson-bits.ts) against each rule stated as a plain
 * scan of every lesson (what the recall statements of schemas 5-7 computed faster), on generated
 * lessons: a small vocabulary and short texts, so scores tie exactly and land on the bounds (4/8 =
 * 0.5, 1/10 = 0.1) as often as near them; ids on both sides of a chunk's end (8,192); keys with
 * more than 256 lessons in a chunk (a bitmap) and fewer (a list); every scope, open, forgotten
 * and other repositories' lessons; words beyond ASCII (a spec with them is scored by Postgres);
 * then texts, scopes and states changed and lessons deleted. Spec mode's anchors (schema 10) are
 * checked as what they promise: each lesson anchored by chalk_spec_anchor_count(n) of its own
 * trigrams, whether the triggers or the back-fill made them.
 */
const RECALLABLE = `resolved_at IS NOT NULL AND forgotten_at IS NULL AND (repo = $1 OR scope = 'general')`;
const reference = {
  failure: `SELECT id, s FROM (
      SELECT id, similarity(first_error, $3)::float8 AS s FROM lessons
        WHERE ${RECALLABLE} AND first_error IS NOT NULL AND $3::text <> '' AND similarity(first_error, $3) > 0.5
      UNION ALL SELECT id, similarity(signature, $2)::float8 FROM lessons
        WHERE ${RECALLABLE} AND first_error IS NULL AND similarity(signature, $2) > 0.1) x
    ORDER BY s DESC, id DESC LIMIT $4`,
  text: `SELECT id, similarity(signature, $2)::float8 AS s FROM lessons
    WHERE ${RECALLABLE} AND similarity(signature, $2) > 0.1 AND $3::text IS NOT NULL ORDER BY s DESC, id DESC LIMIT $4`,
  spec: `SELECT id, word_similarity(coalesce(first_error, signature), $2)::float8 AS s FROM lessons
    WHERE ${RECALLABLE} AND word_similarity(coalesce(first_error, signature), $2) > 0.6 AND $3::text IS NOT NULL
    ORDER BY s DESC, id DESC LIMIT $4`,
} as const;

/** mulberry32: the same lessons and keys every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['redis', 'cache', 'down', 'error', 'pool', 'timeout', 'key', 'ab', 'a', 'x1', 'null', 'read', 'write'];
const WORDS2 = [
  'connect',
  'refused',
  'port',
  '6379',
  'retry',
  'undefined',
  'page',
  'price',
  'load',
  'ok',
  'café',
  'naïve',
];

describe.each(BACKENDS)('lexical recall on the bitmaps equals the plain scan, on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;
  const rnd = random(23);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const text = (n: number) => Array.from({ length: n }, () => pick(rnd() < 0.7 ? WORDS : WORDS2)).join(' ');

  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
    // Ids from 7,900: the lessons span the first chunk's end.
    await store.pool.query(`SELECT setval('lessons_id_seq', 7900)`);
    const lessons = Array.from({ length: 700 }, () => {
      const firstError = rnd() < 0.6 ? text(1 + Math.floor(rnd() * 4)) : null;
      return {
        repo: rnd() < 0.8 ? 'shop' : pick(['other', 'third']),
        signature: `${pick(['rubric failed (exit 1)', 'loop limit', 'repeat: rubric failed'])}\n${firstError ?? text(2 + Math.floor(rnd() * 6))}`,
        firstError,
        scope: pick(['repo', 'general', 'none', null]),
        resolved: rnd() < 0.9,
        forgotten: rnd() < 0.05,
      };
    });
    await store.pool.query(
      `INSERT INTO lessons (repo, ticket, signature, first_error, scope, resolution, lesson, resolved_by, resolved_at, forgotten_at)
       SELECT r, 'T-' || g, s, e, sc, 'note', 'fix', 'me', CASE WHEN ok THEN now() END, CASE WHEN f THEN now() END
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::boolean[]) WITH ORDINALITY AS t(r, s, e, sc, ok, f, g)`,
      [
        lessons.map((l) => l.repo),
        lessons.map((l) => l.signature),
        lessons.map((l) => l.firstError),
        lessons.map((l) => l.scope),
        lessons.map((l) => l.resolved),
        lessons.map((l) => l.forgotten),
      ],
    );
    // 300 lessons of one text in one chunk, another repository's: its anchors' rows are bitmaps.
    await store.pool.query(
      `INSERT INTO lessons (repo, ticket, signature, first_error, scope, resolution, lesson, resolved_by, resolved_at)
       SELECT 'third', 'B-' || g, 'loop limit', 'naïve café write timeout', 'repo', 'note', 'fix', 'me', now()
       FROM generate_series(1, 300) g`,
    );
    // And some one at a time, as office hours writes them.
    for (let i = 0; i < 20; i++) {
      const id = await store.lessons.open({
        repo: 'shop',
        ticket: `S-${i}`,
        signature: `loop limit\n${text(3)}`,
        firstError: i % 2 ? text(2) : null,
      });
      await store.lessons.resolve({
        id,
        resolution: 'note',
        lesson: 'fix',
        resolvedBy: 'me',
        scope: pick(['repo', 'general']),
      });
    }
  }, 300_000);
  afterAll(async () => {
    await store?.close();
    await db?.dispose();
  });

  const keys = (): LexicalQuery[] => {
    const out: LexicalQuery[] = [];
    for (let i = 0; i < 40; i++) {
      const e = text(1 + Math.floor(rnd() * 3));
      const repo = pick(['shop', 'shop', 'other', 'nowhere']);
      out.push({
        repo,
        mode: 'failure',
        query: `${e}\ntests/${pick(WORDS)}.test.ts`,
        firstError: i % 5 ? e : null,
        limit: 3,
      });
      out.push({
        repo,
        mode: 'text',
        query: `rubric failed (exit 1)\n${text(3 + Math.floor(rnd() * 5))}`,
        firstError: null,
        limit: 3,
      });
      out.push({
        repo,
        mode: 'spec',
        query: `# T-9\nWhen ${text(2)} then ${text(4)}.\n- [ ] ${text(3)}`,
        firstError: null,
        limit: i % 3 ? 3 : 5,
      });
    }
    return out;
  };

  /** Each lesson's anchors that are not its own trigrams, and its count of them against chalk_spec_anchor_count(n). */
  async function anchorsOff(): Promise<string[]> {
    const r = await store.pool.query<{ off: string }>(
      `WITH a AS (SELECT name, chunk * 8192 + s AS id
                  FROM (SELECT name, chunk, CASE WHEN list IS NOT NULL THEN chalk_list_slots(list)
                          ELSE ARRAY(SELECT i FROM generate_series(0, 8191) i WHERE get_bit(bits, i) = 1) END AS ss
                        FROM lesson_spec_anchors) x, unnest(ss) AS s),
       l AS (SELECT id, coalesce(show_trgm(coalesce(first_error, signature)), '{}') AS t FROM lessons)
       SELECT coalesce(l.id, a.id) || ': ' || count(a.name) || ' of ' ||
              chalk_spec_anchor_count(coalesce(cardinality(max(l.t)), 0)) || ', not its own: ' ||
              count(a.name) FILTER (WHERE l.id IS NULL OR a.name <> ALL (l.t)) AS off
       FROM l FULL JOIN a ON a.id = l.id GROUP BY coalesce(l.id, a.id)
       HAVING count(a.name) <> chalk_spec_anchor_count(coalesce(cardinality(max(l.t)), 0))
           OR count(a.name) FILTER (WHERE l.id IS NULL OR a.name <> ALL (l.t)) > 0`,
    );
    return r.rows.map((x) => x.off);
  }

  async function expectSame(qs: LexicalQuery[], lexical = (q: LexicalQuery) => store.lessons.lexical(q)) {
    let found = 0;
    let ties = 0;
    for (const q of qs) {
      const got = (await lexical(q)).map((l) => [l.id, l.similarity]);
      const want = (
        await store.pool.query<{ id: string; s: number }>(reference[q.mode], [
          q.repo,
          q.query,
          q.firstError ?? '',
          q.limit,
        ])
      ).rows.map((r) => [Number(r.id), r.s]);
      expect(got, `${q.mode} ${JSON.stringify(q)}`).toEqual(want);
      found += want.length;
      ties += want.filter((w, i) => i > 0 && w[1] === want[i - 1]?.[1]).length;
    }
    return { found, ties };
  }

  it("gives the plain scan's lessons, scores and order, ties and bounds included", { timeout: 300_000 }, async () => {
    const shape = await store.pool.query(
      `SELECT count(*) FILTER (WHERE bits IS NOT NULL) AS bitmaps, count(*) FILTER (WHERE list IS NOT NULL) AS lists,
              count(DISTINCT chunk) AS chunks FROM lesson_bits`,
    );
    expect(shape.rows[0]).toMatchObject({ chunks: '2' });
    expect(Number(shape.rows[0].bitmaps)).toBeGreaterThan(0);
    expect(Number(shape.rows[0].lists)).toBeGreaterThan(0);
    const anchors = await store.pool.query(
      `SELECT count(*) FILTER (WHERE bits IS NOT NULL) AS bitmaps, count(*) FILTER (WHERE list IS NOT NULL) AS lists,
              count(DISTINCT chunk) AS chunks FROM lesson_spec_anchors`,
    );
    expect(anchors.rows[0]).toMatchObject({ chunks: '2' });
    expect(Number(anchors.rows[0].bitmaps)).toBeGreaterThan(0);
    expect(Number(anchors.rows[0].lists)).toBeGreaterThan(0);
    expect(await anchorsOff()).toEqual([]);
    // Spec mode reads ASCII texts in JavaScript here: pg_trgm's trigrams of them are core/store/trigram.ts's.
    expect((await readShape(store.pool)).asciiTrigrams).toBe(true);
    const { found, ties } = await expectSame(keys());
    // The generated keys do find lessons, ties among them.
    expect(found).toBeGreaterThan(100);
    expect(ties).toBeGreaterThan(10);
    const bound = await store.pool.query(
      `SELECT count(*) AS n FROM lessons WHERE first_error IS NOT NULL AND similarity(first_error, 'redis cache') = 0.5`,
    );
    expect(Number(bound.rows[0].n)).toBeGreaterThan(0);
    expect(
      await expectSame([{ repo: 'shop', mode: 'failure', query: 'redis cache', firstError: 'redis cache', limit: 5 }]),
    ).toBeDefined();
  });

  it('still does after texts, scopes and states change and lessons go', { timeout: 300_000 }, async () => {
    const ids = (await store.pool.query<{ id: string }>('SELECT id FROM lessons ORDER BY id')).rows.map((r) =>
      Number(r.id),
    );
    for (const [i, id] of ids.entries()) {
      if (i % 17 === 0) await store.lessons.forget(id);
      else if (i % 13 === 0) await store.lessons.setScope(id, i % 2 ? 'general' : 'none');
      else if (i % 11 === 0)
        await store.pool.query('UPDATE lessons SET signature = $2 WHERE id = $1', [id, `loop limit\n${text(3)}`]);
      else if (i % 7 === 0)
        await store.pool.query('UPDATE lessons SET first_error = $2 WHERE id = $1', [id, i % 2 ? text(2) : null]);
      else if (i % 19 === 0) await store.pool.query('DELETE FROM lessons WHERE id = $1', [id]);
      else if (i % 23 === 0) await store.pool.query('UPDATE lessons SET repo = $2 WHERE id = $1', [id, 'third']);
    }
    expect(await anchorsOff()).toEqual([]);
    await expectSame(keys());
  });

  it("the bits made afresh from the lessons (the schema's back-fill) are the triggers' bits", {
    timeout: 300_000,
  }, async () => {
    // Each key's lessons per chunk, whether a list or a bitmap holds them; a row left empty is none.
    const slots = async () =>
      (
        await store.pool.query<{ row: string }>(
          `SELECT kind || ' ' || name || ' ' || chunk || ': ' || array_to_string(s, ',') AS row
           FROM (SELECT kind, name, chunk, CASE WHEN list IS NOT NULL THEN chalk_list_slots(list)
                   ELSE ARRAY(SELECT i FROM generate_series(0, 8191) i WHERE get_bit(bits, i) = 1) END AS s
                 FROM lesson_bits) x
           WHERE cardinality(s) > 0 ORDER BY kind, name, chunk`,
        )
      ).rows.map((r) => r.row);
    const kept = await slots();
    await store.pool.query('SELECT chalk_lesson_bits_rebuild()');
    expect(await slots()).toEqual(kept);
    // Spec mode's anchors made afresh are chosen by today's counts: maybe others, as good.
    await store.pool.query('SELECT chalk_spec_anchors_rebuild()');
    expect(await anchorsOff()).toEqual([]);
    await expectSame(keys());
  });

  it("spec mode's anchor count is the schema's, and Postgres scoring every candidate gives the same", {
    timeout: 300_000,
  }, async () => {
    const counts = await store.pool.query<{ n: number; a: number }>(
      'SELECT n, chalk_spec_anchor_count(n) AS a FROM generate_series(0, 3000) n ORDER BY n',
    );
    expect(counts.rows.filter((r) => r.a !== anchorCount(r.n))).toEqual([]);
    // A database whose locale reads ASCII otherwise: no text is read in JavaScript.
    const shape = { ...(await readShape(store.pool)), asciiTrigrams: false };
    const { found } = await expectSame(
      keys().filter((q) => q.mode === 'spec'),
      (q) => specLessons(store.pool, shape, q),
    );
    expect(found).toBeGreaterThan(20);
  });

  it('spec mode leaves out a lesson forgotten while the others were ranked', { timeout: 300_000 }, async () => {
    // A spec of ASCII words, with lessons to recall: ranked in JavaScript, then its rows read.
    let q: LexicalQuery | undefined;
    let before: Awaited<ReturnType<typeof store.lessons.lexical>> = [];
    for (const k of keys().filter((k) => k.mode === 'spec' && k.repo === 'shop' && isAscii(k.query))) {
      before = await store.lessons.lexical(k);
      q = k;
      if (before.length > 1) break;
    }
    if (!q) throw new Error('no ASCII spec key');
    expect(before.length).toBeGreaterThan(1);
    const gone = before[0]?.id as number;
    let forgot = false;
    const racing = {
      query: async (sql: string, params: unknown[]) => {
        if (sql === SPEC_ROWS_SQL && !forgot) {
          forgot = true;
          await store.lessons.forget(gone);
        }
        return store.pool.query(sql, params);
      },
    } as unknown as Pool;
    const shape = await readShape(store.pool);
    const got = await specLessons(racing, shape, q);
    expect(forgot).toBe(true);
    expect(got.map((l) => l.id)).not.toContain(gone);
    expect(got.map((l) => [l.id, l.similarity])).toEqual(
      (await store.lessons.lexical(q)).map((l) => [l.id, l.similarity]),
    );
  });
});
