/**
 * The telemetry and lesson store (Postgres: embedded PGlite or a server).
 * The store issue (core/store) refines this interface.
 */
export interface Store {
  close(): Promise<void>;
}
