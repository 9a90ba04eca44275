/** The store's public surface for commands and tests. */
export { recordCall } from './calls.js';
export { recordDecisions } from './decisions.js';
export { ensureEmbedded, probe, stopEmbedded } from './embedded/ensure.js';
export { type EmbeddedPaths, embeddedPaths, embeddedPathsIn } from './embedded/paths.js';
export { CARD_TABLES, freshenCardStats, staleTables, type TableEstimate } from './freshen.js';
export { type OpenOptions, PgStore } from './pg-store.js';
export { applySchema, SCHEMA_VERSION, schemaSql } from './schema.js';
export {
  describeUrl,
  embeddedUrl,
  type StoreTarget,
  storeTarget,
  storeTimeoutMs,
  urlWithoutPassword,
} from './target.js';
export { deriveState } from './tickets.js';
