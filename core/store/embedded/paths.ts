import { join } from 'node:path';
import { stateDir } from '../../layout.js';

/** Where the per-machine embedded database lives: `${XDG_STATE_HOME:-~/.local/state}/chalk/db/`. */
export interface EmbeddedPaths {
  dir: string;
  /** PGlite's data directory. */
  data: string;
  /** The unix socket; `pg` and `psql` find it as host=`dir`, port 5432. */
  socket: string;
  /** The server's pid, held while it runs. */
  pidFile: string;
  /** The server's output; one `started pid N` line per start. */
  logFile: string;
  /** The machine-wide start lock (a directory holding the holder's pid). */
  lock: string;
}

export const EMBEDDED_PORT = 5432;

export function embeddedPaths(env: NodeJS.ProcessEnv = process.env): EmbeddedPaths {
  return embeddedPathsIn(join(stateDir(env), 'db'));
}

export function embeddedPathsIn(dir: string): EmbeddedPaths {
  return {
    dir,
    data: join(dir, 'data'),
    socket: join(dir, `.s.PGSQL.${EMBEDDED_PORT}`),
    pidFile: join(dir, 'server.pid'),
    logFile: join(dir, 'server.log'),
    lock: join(dir, 'start.lock'),
  };
}
