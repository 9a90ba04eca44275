import type { Pool } from 'pg';
import { trigrams } from './trigram.js';

/** What the connected database can do, read once after the schema is applied. */
export interface Shape {
  /** lessons.embedding is a pgvector column. */
  vector: boolean;
  /** pg_trgm is installed. */
  trgm: boolean;
  /**
   * pg_trgm makes of ASCII text the trigrams core/store/trigram.ts makes (its locale reads every
   * ASCII character as the probe's: the same word characters, the same lower case), so spec-mode
   * recall reads ASCII texts in JavaScript.
   */
  asciiTrigrams: boolean;
}

/** Every ASCII character but NUL between two letters: a word character joins them, any other parts them. */
export const TRIGRAM_PROBE = Array.from({ length: 127 }, (_, i) => `q${String.fromCharCode(i + 1)}q`).join(' ');

export async function readShape(db: Pool): Promise<Shape> {
  const r = await db.query<{ vector: boolean; trgm: boolean }>(
    `SELECT
       EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
               WHERE a.attrelid = 'lessons'::regclass AND a.attname = 'embedding'
                 AND NOT a.attisdropped AND t.typname = 'vector') AS vector,
       EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trgm`,
  );
  const trgm = Boolean(r.rows[0]?.trgm);
  let asciiTrigrams = false;
  if (trgm) {
    const p = await db.query<{ t: string[] }>('SELECT show_trgm($1) AS t', [TRIGRAM_PROBE]);
    const pg = p.rows[0]?.t ?? [];
    const js = trigrams(TRIGRAM_PROBE);
    asciiTrigrams = pg.length === js.size && pg.every((t) => js.has(t));
  }
  return { vector: Boolean(r.rows[0]?.vector), trgm, asciiTrigrams };
}

/** An embedding as a bound parameter for the column's type (pgvector's text form, or a real[]). */
export function embeddingParam(shape: Shape, embedding: number[]): unknown {
  if (embedding.length !== 384 || !embedding.every(Number.isFinite)) {
    throw new Error(`an embedding has 384 finite numbers (got ${embedding.length})`);
  }
  return shape.vector ? `[${embedding.join(',')}]` : embedding;
}
