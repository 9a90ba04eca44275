import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';
import { checkDataMajor } from './engine.js';
import type { EmbeddedPaths } from './paths.js';
import { SessionQueue } from './session-queue.js';

/** Opens a data directory with this Chalk's PGlite, pgvector and pg_trgm. */
export function openPglite(dataDir: string): Promise<PGlite> {
  return PGlite.create({ dataDir, extensions: { vector, pg_trgm } });
}

/** One PGlite database served over a unix socket to any number of `pg`/`psql` clients. */
export class EmbeddedServer {
  private server: Server | null = null;
  private readonly handlers = new Set<PGLiteSocketHandler>();

  private constructor(
    readonly db: PGlite,
    private readonly paths: EmbeddedPaths,
  ) {}

  static async open(paths: EmbeddedPaths): Promise<EmbeddedServer> {
    checkDataMajor(paths);
    const db = await openPglite(paths.data);
    return new EmbeddedServer(db, paths);
  }

  async listen(): Promise<void> {
    const queue = new SessionQueue(this.db);
    rmSync(this.paths.socket, { force: true });
    const server = createServer((socket: Socket) => {
      // The handler frames messages; the session queue decides whose turn it is.
      const handler = new PGLiteSocketHandler({ queryQueue: queue as never, closeOnDetach: true });
      this.handlers.add(handler);
      const forget = () => this.handlers.delete(handler);
      handler.addEventListener('close', forget);
      handler.addEventListener('error', forget);
      handler.attach(socket).catch(() => {
        forget();
        socket.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.paths.socket, () => resolve());
    });
    chmodSync(this.paths.socket, 0o600);
    this.server = server;
  }

  get connections(): number {
    return this.handlers.size;
  }

  /** Stops accepting, closes every connection (rolling back what each left open) and closes the database. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...this.handlers].map((h) => h.detach(true)));
      await closed;
    }
    await this.db.close();
    rmSync(this.paths.socket, { force: true });
  }
}
