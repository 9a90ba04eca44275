import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { UserError } from '../../errors.js';
import { RECORD_VERSION, SCHEMA_VERSION, schemaSql } from '../schema.js';
import type { EngineDb } from './engine.js';

/**
 * Moving a database's rows between two PGlite engines of different Postgres majors, for
 * `chalk db upgrade`: both are brought to this Chalk's schema first, so their tables match;
 * each table is written out with COPY (text format, which every major reads) to a file beside
 * the data, loaded with COPY into the new database, and checked by reading it back.
 */

/** One table as the old database held it. */
export interface TableDump {
  table: string;
  /** Its stored columns (generated ones are computed again by the new database). */
  columns: string[];
  rows: number;
  /** sha256 of each row's COPY line, summed mod 2^64: the same rows in any order give the same digest. */
  digest: string;
  file: string;
}

export interface Dump {
  tables: TableDump[];
  sequences: { name: string; value: string }[];
}

const q = (name: string) => pg.escapeIdentifier(name);
const rows = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;

/** Brings a database to this Chalk's schema, as applySchema does on a `pg` pool. */
export async function bringToSchema(db: EngineDb): Promise<void> {
  await db.exec('BEGIN');
  try {
    await db.exec(schemaSql());
    await db.query(RECORD_VERSION, [SCHEMA_VERSION]);
    await db.exec('COMMIT');
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** The ordinary tables of the public schema, each with its stored columns, by name. */
async function tablesOf(db: EngineDb): Promise<{ table: string; columns: string[] }[]> {
  const r = await db.query<{ t: string; cols: string[] }>(
    `SELECT c.relname AS t, array_agg(a.attname::text ORDER BY a.attnum) AS cols
     FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace AND a.attnum > 0
       AND NOT a.attisdropped AND a.attgenerated = ''
     GROUP BY c.relname
     ORDER BY c.relname`,
  );
  return r.rows.map((x) => ({ table: x.t, columns: x.cols }));
}

function digestOf(copy: Buffer): { rows: number; digest: string } {
  // COPY's text format escapes newlines inside values, so each row is one line.
  const lines = copy.toString('utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let sum = 0n;
  for (const line of lines) sum = (sum + createHash('sha256').update(line).digest().readBigUInt64BE(0)) % 2n ** 64n;
  return { rows: lines.length, digest: sum.toString(16) };
}

async function copyOut(db: EngineDb, table: string, columns: string[]): Promise<Buffer> {
  const r = await db.query(`COPY ${q(table)} (${columns.map(q).join(', ')}) TO '/dev/blob'`);
  return r.blob ? Buffer.from(await r.blob.arrayBuffer()) : Buffer.alloc(0);
}

/** Writes every table of `db` into `dir` (one `<table>.copy` file each) and returns what it wrote. */
export async function dumpTables(db: EngineDb, dir: string, say: (line: string) => void): Promise<Dump> {
  const tables: TableDump[] = [];
  for (const { table, columns } of await tablesOf(db)) {
    const copy = await copyOut(db, table, columns);
    const file = join(dir, `${table}.copy`);
    writeFileSync(file, copy, { mode: 0o600 });
    const d = digestOf(copy);
    say(`read ${table}: ${rows(d.rows)}`);
    tables.push({ table, columns, file, ...d });
  }
  const s = await db.query<{ name: string; value: string }>(
    `SELECT quote_ident(sequencename) AS name, last_value::text AS value FROM pg_sequences
     WHERE schemaname = 'public' AND last_value IS NOT NULL`,
  );
  return { tables, sequences: s.rows };
}

/**
 * Loads a dump into `db` (already at this Chalk's schema, and otherwise empty) in one
 * transaction, with triggers off as pg_restore does (the rows, lesson_bits included, are
 * loaded as they were), then reads every table back and compares rows and digest.
 */
export async function restoreTables(db: EngineDb, dump: Dump, say: (line: string) => void): Promise<void> {
  const have = new Map((await tablesOf(db)).map((t) => [t.table, new Set(t.columns)]));
  const foreign = dump.tables.filter((t) => !have.has(t.table)).map((t) => t.table);
  if (foreign.length > 0) {
    throw new UserError(
      `the embedded database has tables Chalk did not make (${foreign.join(', ')}): chalk db upgrade moves only Chalk's; copy them out (chalk db psql with the Chalk that wrote it), drop them and run it again`,
    );
  }
  for (const t of dump.tables) {
    const missing = t.columns.filter((c) => !have.get(t.table)?.has(c));
    if (missing.length > 0) throw new Error(`${t.table} has columns this Chalk's schema lacks: ${missing.join(', ')}`);
  }
  await db.exec('BEGIN');
  try {
    await db.exec('SET LOCAL session_replication_role = replica');
    for (const t of dump.tables) {
      await db.exec(`DELETE FROM ${q(t.table)}`);
      if (t.rows === 0) continue;
      const blob = new Blob([readFileSync(t.file)]);
      await db.query(`COPY ${q(t.table)} (${t.columns.map(q).join(', ')}) FROM '/dev/blob'`, [], { blob });
    }
    for (const s of dump.sequences) await db.query(`SELECT setval($1, $2::bigint)`, [s.name, s.value]);
    await db.exec('COMMIT');
  } catch (err) {
    await db.exec('ROLLBACK').catch(() => {});
    throw err;
  }
  for (const t of dump.tables) {
    const back = digestOf(await copyOut(db, t.table, t.columns));
    if (back.rows !== t.rows || back.digest !== t.digest) {
      throw new Error(`${t.table} did not come back the same: ${rows(t.rows)} written, ${back.rows} read back`);
    }
    say(`wrote ${t.table}: ${rows(t.rows)}, read back the same`);
  }
}
