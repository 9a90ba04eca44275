import type { Embedder } from '../ports/embedder.js';
import type { LessonResolve, Store } from '../ports/store.js';

/** What a lesson's embedding is made of: its rule when one was distilled, else the person's resolution. */
export function lessonEmbeddingText(lesson: { lesson: string | null; resolution: string | null }): string | null {
  const text = (lesson.lesson ?? '').trim() !== '' ? lesson.lesson : lesson.resolution;
  return text && text.trim() !== '' ? text : null;
}

/** Time an office-hours resolve gives the embedding (it is never during a loop). */
export const RESOLVE_EMBED_MS = 5_000;

/**
 * Resolves a lesson with its embedding: embeds its text, then `store.lessons.resolve` with it.
 * When the embedding service does not answer, the lesson is resolved without one (a back-fill
 * writes it later) and the reason is returned; the resolve itself is never held up for longer
 * than `timeoutMs`.
 */
export async function resolveWithEmbedding(opts: {
  store: Pick<Store, 'lessons'>;
  embedder: Embedder | null;
  resolve: LessonResolve;
  timeoutMs?: number;
}): Promise<{ embedded: boolean; reason?: string }> {
  const text = lessonEmbeddingText(opts.resolve);
  let embedding: number[] | null = null;
  let reason: string | undefined;
  if (!opts.embedder) reason = 'no embedder';
  else if (!text) reason = 'nothing to embed';
  else {
    try {
      const [v] = await opts.embedder.embed([text], {
        signal: AbortSignal.timeout(opts.timeoutMs ?? RESOLVE_EMBED_MS),
      });
      embedding = v ?? null;
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
    }
  }
  await opts.store.lessons.resolve({ ...opts.resolve, embedding });
  return embedding ? { embedded: true } : { embedded: false, ...(reason ? { reason } : {}) };
}

/**
 * What a back-fill needs from the lessons store (`Store['lessons']` has both): resolved lessons
 * with no embedding (oldest first), and writing one lesson's embedding.
 */
export type LessonEmbeddingStore = Pick<Store['lessons'], 'unembedded' | 'setEmbedding'>;

/** How many lessons one embedding request carries. */
export const BACKFILL_BATCH = 16;

/**
 * Writes the embedding of every resolved lesson lacking one, a batch at a time, until none is
 * left or the service stops answering (then it stops, and the next back-fill goes on).
 * Returns how many were written and why it stopped early, if it did.
 */
export async function backfillLessonEmbeddings(opts: {
  lessons: LessonEmbeddingStore;
  embedder: Embedder;
  batch?: number;
  signal?: AbortSignal;
}): Promise<{ written: number; stopped?: string }> {
  const size = opts.batch ?? BACKFILL_BATCH;
  let written = 0;
  const skipped = new Set<number>();
  for (;;) {
    const rows = (await opts.lessons.unembedded(size + skipped.size)).filter((r) => !skipped.has(r.id));
    const todo = rows.slice(0, size).flatMap((r) => {
      const text = lessonEmbeddingText(r);
      if (!text) skipped.add(r.id);
      return text ? [{ id: r.id, text }] : [];
    });
    if (todo.length === 0) {
      if (rows.length === 0) return { written };
      continue;
    }
    let vectors: number[][];
    try {
      vectors = await opts.embedder.embed(
        todo.map((t) => t.text),
        opts.signal ? { signal: opts.signal } : {},
      );
    } catch (err) {
      return { written, stopped: err instanceof Error ? err.message : String(err) };
    }
    for (const [i, t] of todo.entries()) {
      const v = vectors[i];
      if (v) {
        await opts.lessons.setEmbedding(t.id, v);
        written++;
      }
    }
  }
}
