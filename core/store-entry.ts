/**
 * `chalk-harness/store`: the Postgres store (embedded PGlite by default) for a plugin that
 * works on it outside a run: where it is (`storeTarget`), the store itself (`PgStore`), the
 * embedded store's paths, and the lesson embeddings' backfill.
 */
export { backfillLessonEmbeddings, type LessonEmbeddingStore } from './embedding/lessons.js';
export {
  describeUrl,
  type EmbeddedPaths,
  embeddedPaths,
  embeddedPathsIn,
  type OpenOptions,
  PgStore,
  type StoreTarget,
  storeTarget,
  storeTimeoutMs,
} from './store/index.js';
