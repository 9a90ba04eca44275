import pg from 'pg';
import { COPIED, type CopiedTable, IDENTITY_COLUMNS } from './plan.js';

/**
 * Copies every row of the copied tables (plan.ts) from one Chalk database to another, both at
 * this Chalk's schema. A row's identity is where it was born: its `origin` (the source's own
 * `chalk_schema.origin` when it was born there) and its id there. The target keeps both and has a
 * unique index on them, so copying a row twice adds it once, and rows of two machines never
 * collide however their serial ids overlap. A column pointing at another copied table's row
 * (lesson_recalls.call_id -> runs, ...) travels as that row's identity and is mapped to the
 * target's id for it. Every value travels as text, so an embedding moves between vector(384) and
 * real[] either way. Rows go in batches, each one statement; a copy that stops half way is
 * finished by running it again.
 */

export interface TableCopied {
  table: string;
  /** Rows the source has. */
  read: number;
  added: number;
  /** Rows the target had already (from an earlier copy, or born there). */
  already: number;
}

interface Column {
  name: string;
  type: string;
}

const id = (name: string) => pg.escapeIdentifier(name);

async function columnsOf(db: pg.Pool, table: string): Promise<Column[]> {
  const r = await db.query<Column>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
     ORDER BY a.attnum`,
    [table],
  );
  return r.rows;
}

/** A database's own origin (schema version 8 gives every database one). */
export async function originOf(db: pg.Pool): Promise<string> {
  const r = await db.query<{ origin: string }>('SELECT origin FROM chalk_schema WHERE id = 1');
  const origin = r.rows[0]?.origin;
  if (!origin) throw new Error('the database has no origin in chalk_schema: is its schema version 8 or later?');
  return origin;
}

/**
 * A text value as the target column's type. Embeddings are written '[1,2]' by pgvector and
 * '{1,2}' as real[]: the brackets are turned for the type that receives them.
 */
function fromText(expr: string, type: string): string {
  if (type.startsWith('vector')) return `translate(${expr}, '{}', '[]')::${type}`;
  if (type === 'real[]' || type === 'double precision[]') return `translate(${expr}, '[]', '{}')::${type}`;
  return `${expr}::${type}`;
}

/** The two statements that move one table: a page of the source, and its insert into the target. */
function statements(plan: CopiedTable, columns: Column[]): { read: string; write: string } {
  const plain = columns.filter((c) => !IDENTITY_COLUMNS.has(c.name) && !(c.name in plan.refs));
  const refs = Object.entries(plan.refs);
  const refOrigin = (col: string) => id(`ref_${col}_origin`);
  const refId = (col: string) => id(`ref_${col}_id`);
  const read = [
    `SELECT t.id, coalesce(t.origin, $1) AS origin, coalesce(t.origin_id, t.id) AS origin_id`,
    ...plain.map((c) => `, t.${id(c.name)}::text AS ${id(c.name)}`),
    ...refs.map(
      ([col], i) =>
        `, CASE WHEN p${i}.id IS NOT NULL THEN coalesce(p${i}.origin, $1) END AS ${refOrigin(col)}` +
        `, coalesce(p${i}.origin_id, p${i}.id) AS ${refId(col)}`,
    ),
    ` FROM ${id(plan.table)} t`,
    ...refs.map(([col, parent], i) => ` LEFT JOIN ${id(parent)} p${i} ON p${i}.id = t.${id(col)}`),
    ` WHERE t.id > $2 ORDER BY t.id LIMIT $3`,
  ].join('');
  const record = [
    'origin text',
    'origin_id bigint',
    ...plain.map((c) => `${id(c.name)} text`),
    ...refs.flatMap(([col]) => [`${refOrigin(col)} text`, `${refId(col)} bigint`]),
  ].join(', ');
  // A parent born in the target itself (its origin is the target's) is found by its id there.
  const mapped = (col: string, parent: string) =>
    `(SELECT p.id FROM ${id(parent)} p WHERE (p.origin = x.${refOrigin(col)} AND p.origin_id = x.${refId(col)})` +
    ` OR (x.${refOrigin(col)} = $2 AND p.origin IS NULL AND p.id = x.${refId(col)}))`;
  const write = [
    `INSERT INTO ${id(plan.table)} (origin, origin_id`,
    ...plain.map((c) => `, ${id(c.name)}`),
    ...refs.map(([col]) => `, ${id(col)}`),
    `) SELECT x.origin, x.origin_id`,
    ...plain.map((c) => `, ${fromText(`x.${id(c.name)}`, c.type)}`),
    ...refs.map(([col, parent]) => `, ${mapped(col, parent)}`),
    ` FROM jsonb_to_recordset($1::jsonb) AS x(${record})`,
    // A row born in the target and copied out and back is already there under its own id.
    ` WHERE x.origin <> $2`,
    ` ON CONFLICT (origin, origin_id) DO NOTHING`,
  ].join('');
  return { read, write };
}

/** Copies every copied table from `source` to `target`; `progress` gets a line per batch. */
export async function copyRows(
  source: pg.Pool,
  target: pg.Pool,
  progress: (line: string) => void,
  batch = 500,
): Promise<TableCopied[]> {
  const from = await originOf(source);
  const to = await originOf(target);
  const out: TableCopied[] = [];
  for (const plan of COPIED) {
    const theirs = new Map((await columnsOf(target, plan.table)).map((c) => [c.name, c]));
    const ours = await columnsOf(source, plan.table);
    const missing = ours.filter((c) => !theirs.has(c.name)).map((c) => c.name);
    if (missing.length > 0) {
      throw new Error(`the target's ${plan.table} lacks ${missing.join(', ')}: is its schema older than this Chalk's?`);
    }
    const { read, write } = statements(
      plan,
      ours.map((c) => theirs.get(c.name) as Column),
    );
    const total = Number((await source.query<{ n: string }>(`SELECT count(*) AS n FROM ${id(plan.table)}`)).rows[0]?.n);
    let last = 0;
    let done = 0;
    let added = 0;
    for (;;) {
      const page = await source.query<{ id: string } & Record<string, unknown>>(read, [from, last, batch]);
      if (page.rows.length === 0) break;
      last = Number(page.rows[page.rows.length - 1]?.id);
      const rows = page.rows.map(({ id: _, ...row }) => row);
      added += (await target.query(write, [JSON.stringify(rows), to])).rowCount ?? 0;
      done += rows.length;
      progress(`copying ${plan.table}: ${done} of ${Math.max(total, done)}`);
    }
    out.push({ table: plan.table, read: done, added, already: done - added });
  }
  return out;
}
