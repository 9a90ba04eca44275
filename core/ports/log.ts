/** Where a command's lines go. A `child` prefixes every line (e.g. `[PROJ-1] `). */
export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
  child(prefix: string): Log;
}
