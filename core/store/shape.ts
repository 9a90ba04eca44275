import type { Pool } from 'pg';

/** What the connected database can do, read once after the schema is applied. */
export interface Shape {
  /** lessons.embedding is a pgvector column. */
  vector: boolean;
  /** pg_trgm is installed. */
  trgm: boolean;
}

export async function readShape(db: Pool): Promise<Shape> {
  const r = await db.query<{ vector: boolean; trgm: boolean }>(
    `SELECT
       EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
               WHERE a.attrelid = 'lessons'::regclass AND a.attname = 'embedding'
                 AND NOT a.attisdropped AND t.typname = 'vector') AS vector,
       EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trgm`,
  );
  return { vector: Boolean(r.rows[0]?.vector), trgm: Boolean(r.rows[0]?.trgm) };
}

/** An embedding as a bound parameter for the column's type (pgvector's text form, or a real[]). */
export function embeddingParam(shape: Shape, embedding: number[]): unknown {
  if (embedding.length !== 384 || !embedding.every(Number.isFinite)) {
    throw new Error(`an embedding has 384 finite numbers (got ${embedding.length})`);
  }
  return shape.vector ? `[${embedding.join(',')}]` : embedding;
}
