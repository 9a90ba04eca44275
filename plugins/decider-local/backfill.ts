import { existsSync } from 'node:fs';
import type { Embedder, Store } from '../../core/plugin.js';
import { backfillLessonEmbeddings, embeddedPathsIn, PgStore, type StoreTarget } from '../../core/store-entry.js';
import { EmbedClient } from './embed/client.js';

/** The longest a back-fill after health runs (it is never during a loop; a later one goes on). */
export const BACKFILL_MS = 60_000;

/**
 * Once the local services are healthy: writes the embedding of every resolved lesson lacking one
 * (office hours resolved it while the embedding service was down). Best effort: a store or
 * service that fails ends it with one line, never an error; returns that line.
 */
export async function backfillAfterHealth(o: {
  store: () => Promise<Pick<Store, 'lessons' | 'close'>>;
  embedder: Embedder;
  timeoutMs?: number;
}): Promise<string> {
  let store: Pick<Store, 'lessons' | 'close'> | null = null;
  try {
    store = await o.store();
    const r = await backfillLessonEmbeddings({
      lessons: store.lessons,
      embedder: o.embedder,
      signal: AbortSignal.timeout(o.timeoutMs ?? BACKFILL_MS),
    });
    const n = `${r.written} lesson embedding${r.written === 1 ? '' : 's'} back-filled`;
    return r.stopped ? `${n}, then stopped: ${r.stopped}` : n;
  } catch (err) {
    return `no lesson embeddings back-filled: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
  } finally {
    await store?.close().catch(() => {});
  }
}

/** The back-fill against the store a target names, through the local embedding service on `embedPort`. */
export async function backfillLocal(o: { target: StoreTarget; timeoutMs: number; embedPort: number }): Promise<string> {
  // No embedded database yet: no lessons to back-fill, and none is made for it.
  if (o.target.kind === 'embedded' && !existsSync(o.target.paths.data))
    return 'no lessons to back-fill (no database yet)';
  const embedder = new EmbedClient({ url: `http://127.0.0.1:${o.embedPort}` });
  try {
    return await backfillAfterHealth({ store: () => PgStore.open(o.target, o.timeoutMs), embedder });
  } finally {
    await embedder.close();
  }
}

/**
 * How start-main.js learns the store without a secret on its command line: the embedded
 * server's directory as an argument, a server's URL in its environment (CHALK_DATABASE_URL).
 */
export function targetFromChild(o: { dbDir: string | undefined; env: NodeJS.ProcessEnv }): StoreTarget | null {
  const url = o.env.CHALK_DATABASE_URL;
  if (url) return { kind: 'server', url };
  return o.dbDir ? { kind: 'embedded', paths: embeddedPathsIn(o.dbDir) } : null;
}
