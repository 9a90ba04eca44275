/** A `pg` pool or client, or a PGlite of any release: all answer query(text, values) with rows. */
// biome-ignore lint/suspicious/noExplicitAny: the drivers' own signatures, which this must accept.
type Db = { query<T = any>(text: string, values?: any[]): Promise<{ rows: T[] }> };

/** The lessons' failures, one per ticket in turn: far enough apart that recall tells them apart. */
export const FAILURES = [
  'expected greeting to be hello but got goodbye',
  'checkout timed out after 30 seconds waiting for the payment queue',
  'quota exceeded while uploading invoices to the archive bucket',
  'null pointer in the shipping label renderer for parcels abroad',
];

/**
 * A little of every table's history, written only in the columns schema version 1 already had
 * (and lesson_recalls once version 5 made it), so the same rows go into a database of any
 * version, on either backend: per `tag` (its repository name), `n` tickets with two loops each,
 * an event, a lesson (every other one resolved, with an embedding), a decider answer pointing at
 * the ticket's first loop and its lesson, and a recall of that lesson by the second loop. Texts
 * carry quotes, a backslash, a newline and a non-ASCII letter, so a copy that mangles text shows.
 */
export async function seedHistory(db: Db, tag: string, n = 4): Promise<void> {
  const text = (k: string) => `${tag} ${k}: it's "quoted" \\ back\nslash, ünïcode`;
  for (let i = 1; i <= n; i++) {
    const ticket = `${tag.toUpperCase().replace(/[^A-Z]/g, '') || 'T'}-${i}`;
    const runs: string[] = [];
    for (const loop of [1, 2]) {
      const r = await db.query<{ id: string }>(
        `INSERT INTO runs (repo, ticket, branch, loop, kind, agent_status, rubric_exit, progressed, model, prompts,
           cost_usd, budget_usd, duration_s, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
           turns, denials, lessons, created_at)
         VALUES ($1, $2, $3, $4::int, 'continue', 'ok', $5, $6, 'claude-x', $7, $8, 2, 30, 1000, 200, 50, 5, 4, 0, $9,
           timestamptz '2026-01-02 03:04:05.678901+00' + make_interval(days => $10::int, secs => $4::int))
         RETURNING id`,
        [
          tag,
          ticket,
          `chalk/${ticket}`,
          loop,
          loop === 1 ? 1 : 0,
          loop === 2,
          text('prompts'),
          0.1234 * i,
          loop - 1,
          i,
        ],
      );
      runs.push(r.rows[0]!.id);
    }
    await db.query(`INSERT INTO events (repo, ticket, kind) VALUES ($1, $2, 'detention')`, [tag, ticket]);
    const resolved = i % 2 === 1;
    const l = await db.query<{ id: string }>(
      `INSERT INTO lessons (repo, ticket, signature, resolution, lesson, resolved_by, resolved_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 THEN timestamptz '2026-01-03 00:00:00+00' END) RETURNING id`,
      [
        tag,
        ticket,
        `${tag} ${FAILURES[(i - 1) % FAILURES.length]}`,
        resolved ? text('note') : null,
        resolved ? text('lesson') : null,
        resolved ? 'me@example.com' : null,
        resolved,
      ],
    );
    const lesson = l.rows[0]!.id;
    if (resolved) await setEmbedding(db, lesson, i);
    await db.query(
      `INSERT INTO decisions (call_id, run_id, kind, question, answer, confidence, threshold, mode, latency_ms, lesson_id)
       VALUES ($1, $2, 'stuck', $3, 'yes', 0.912, 0.9, 'shadow', 321, $4)`,
      [runs[0], `${ticket}-run`, text('question'), lesson],
    );
    if (await hasTable(db, 'lesson_recalls')) {
      await db.query(
        `INSERT INTO lesson_recalls (call_id, run_id, loop, lesson_id, how) VALUES ($1, $2, 2, $3, 'lexical')`,
        [runs[1], `${ticket}-run`, lesson],
      );
    }
  }
}

/** A deterministic unit vector for seed `k`, written as the column's type (vector(384) or real[]). */
export async function setEmbedding(db: Db, lessonId: string | number, k: number): Promise<void> {
  const v = Array.from({ length: 384 }, (_, i) => Math.round(Math.sin(k * 7.3 + i * 0.37) * 1e4) / 1e4);
  const t = await db.query<{ t: string }>(
    `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'lessons'::regclass AND attname = 'embedding'`,
  );
  const vector = t.rows[0]?.t.startsWith('vector');
  await db.query(`UPDATE lessons SET embedding = $1 WHERE id = $2`, [vector ? `[${v.join(',')}]` : v, lessonId]);
}

export async function hasTable(db: Db, table: string): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [table]);
  return Boolean(r.rows[0]?.ok);
}

/** The ordinary tables of the current schema, by name. */
export async function tableNames(db: Db): Promise<string[]> {
  const r = await db.query<{ t: string }>(
    `SELECT c.relname AS t FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
     ORDER BY 1`,
  );
  return r.rows.map((x) => x.t);
}

/** Rows per table. */
export async function tableCounts(db: Db, tables?: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables ?? (await tableNames(db))) {
    const r = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`);
    out[t] = Number(r.rows[0]?.n);
  }
  return out;
}

/**
 * Every row of every table as text (row_to_json), ordered by its key, in the columns `columns`
 * names per table (all when absent): what a move between databases must keep exactly.
 */
export async function tableRows(db: Db, columns?: Record<string, string[]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of columns ? Object.keys(columns) : await tableNames(db)) {
    const cols = columns?.[t];
    const pick = cols ? `json_build_object(${cols.map((c) => `'${c}', ${c}`).join(', ')})` : 'row_to_json(x)';
    const order =
      t === 'lesson_bits'
        ? 'kind, name, chunk'
        : t === 'lesson_spec_anchors'
          ? 'name, chunk'
          : t === 'lesson_trgms'
            ? 'lesson_id, trgm'
            : 'id';
    const r = await db.query<{ row: string }>(`SELECT ${pick}::text AS row FROM ${t} x ORDER BY ${order}`);
    out[t] = r.rows.map((x) => x.row);
  }
  return out;
}

/** Each table's columns that are stored (not generated), by name. */
export async function storedColumns(db: Db): Promise<Record<string, string[]>> {
  const r = await db.query<{ t: string; c: string }>(
    `SELECT c.relname AS t, a.attname AS c FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0
       AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY c.relname, a.attnum`,
  );
  const out: Record<string, string[]> = {};
  for (const { t, c } of r.rows) out[t] = [...(out[t] ?? []), c];
  return out;
}

/**
 * What a database's schema is made of, comparable between two databases: each column with its
 * type, nullability, default and generation, each index's definition, each trigger and each
 * chalk_* function.
 */
export async function schemaShape(db: Db): Promise<Record<string, string[]>> {
  const rows = async (sql: string) => (await db.query<{ x: string }>(sql)).rows.map((r) => r.x).sort();
  return {
    columns: await rows(
      `SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
              || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || ' ' || a.attgenerated::text
              || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') AS x
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped`,
    ),
    indexes: await rows(`SELECT indexdef AS x FROM pg_indexes WHERE schemaname = current_schema()`),
    triggers: await rows(
      `SELECT tgrelid::regclass::text || ' ' || pg_get_triggerdef(oid) AS x FROM pg_trigger WHERE NOT tgisinternal`,
    ),
    functions: await rows(
      `SELECT p.proname || ' ' || md5(pg_get_functiondef(p.oid)) AS x FROM pg_proc p
       WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'chalk\\_%'`,
    ),
  };
}
