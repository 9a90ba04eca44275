import { z } from 'zod';

/** The embedding model and its shape: lessons.embedding is `vector(384)`. */
export const EMBED_MODEL = 'BAAI/bge-small-en-v1.5';
export const EMBED_DIMENSIONS = 384;
/** How far from 1 a vector's length may be and still count as unit length. */
export const UNIT_TOLERANCE = 1e-3;
/** The most inputs one request may carry (the service refuses more). */
export const MAX_INPUTS = 64;
/** The path every embedding service answers on (OpenAI-compatible). */
export const EMBED_PATH = '/v1/embeddings';

const ResponseWire = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative().optional(),
      embedding: z.array(z.number()),
    }),
    { error: 'has no data array' },
  ),
});

export class EmbeddingRefused extends Error {
  override name = 'EmbeddingRefused';
}

export function vectorLength(v: readonly number[]): number {
  let sum = 0;
  for (const x of v) sum += x * x;
  return Math.sqrt(sum);
}

/**
 * Checks one vector: 384 finite numbers of unit length. Returns why not, naming
 * what is wrong (the input's position and what was found), or null.
 */
export function vectorProblem(v: readonly number[], at: number): string | null {
  if (v.length !== EMBED_DIMENSIONS) {
    return `embedding ${at} has ${v.length} dimensions, and Chalk needs ${EMBED_DIMENSIONS} (${EMBED_MODEL})`;
  }
  if (!v.every(Number.isFinite)) return `embedding ${at} holds a value that is not a finite number`;
  const len = vectorLength(v);
  if (Math.abs(len - 1) > UNIT_TOLERANCE) {
    return `embedding ${at} has length ${len.toFixed(4)}, not unit length`;
  }
  return null;
}

/**
 * Reads `POST /v1/embeddings`'s answer for `count` inputs: exactly one entry per input,
 * put in the order of `index` (when given), each 384 dimensions of unit length. Anything
 * else is refused with a line naming what is wrong.
 */
export function readEmbeddings(body: string, count: number): number[][] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new EmbeddingRefused('the body is not JSON');
  }
  const parsed = ResponseWire.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new EmbeddingRefused(
      `the body ${i && i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : (i?.message ?? 'is not an answer')}`,
    );
  }
  const data = parsed.data.data;
  if (data.length !== count) {
    throw new EmbeddingRefused(`the service answered ${data.length} embeddings for ${count} inputs`);
  }
  const out: number[][] = new Array(count);
  data.forEach((d, i) => {
    const at = d.index ?? i;
    if (at >= count || out[at] !== undefined)
      throw new EmbeddingRefused(`the embeddings' indexes are not 0 to ${count - 1}`);
    out[at] = d.embedding;
  });
  out.forEach((v, i) => {
    const problem = vectorProblem(v, i);
    if (problem) throw new EmbeddingRefused(problem);
  });
  return out;
}

/** The request body: `{input, model}`, inputs in order. */
export function encodeEmbedRequest(texts: readonly string[]): string {
  return JSON.stringify({ input: texts, model: EMBED_MODEL });
}

/** Unit length, each value to 6 places (what the service sends). */
export function normalise(v: readonly number[]): number[] {
  const len = vectorLength(v) || 1;
  return v.map((x) => Math.round((x / len) * 1e6) / 1e6);
}
