import { Socket } from 'node:net';
import type pg from 'pg';
import type { Config } from '../config/config.js';
import type { Store, StoreInfo } from '../ports/store.js';
import { recordCall, runTotals } from './calls.js';
import { recordDecisions, stuckAnswers } from './decisions.js';
import { checkDataMajor } from './embedded/engine.js';
import { ensureEmbedded, nobodyListens } from './embedded/ensure.js';
import { EMBEDDED_PORT } from './embedded/paths.js';
import { connectionError } from './errors.js';
import { recordEvent } from './events.js';
import { storeInfo } from './info.js';
import { semanticGate, semanticLessons, setLessonEmbedding, unembeddedLessons } from './lesson-embeddings.js';
import {
  exactLessons,
  explainRecall,
  forgetLesson,
  getLesson,
  lexicalLessons,
  listLessons,
  openByFingerprint,
  openLesson,
  recordRecalls,
  resolveLesson,
  setLessonScope,
} from './lessons.js';
import { importPg } from './pg-import.js';
import { applySchema } from './schema.js';
import { readShape, type Shape } from './shape.js';
import { describeUrl, type StoreTarget, storeTarget, storeTimeoutMs } from './target.js';
import { ticketSummaries } from './tickets.js';

// Postgres bigint (count, sum, bigserial) arrives as text; callers convert where they read it.

/** How a caller follows a store's opening (`PgStore.open`). */
export interface OpenOptions {
  /** Called once the first connection has been asked for (the socket is connecting). */
  connecting?: () => void;
}

/** The store on a `pg` pool: the same code for the embedded server and any Postgres server. */
export class PgStore implements Store {
  private constructor(
    readonly pool: pg.Pool,
    readonly kind: 'embedded' | 'server',
    readonly where: string,
    private readonly sockets: ReadonlySet<Socket> = new Set(),
  ) {}

  /**
   * What the database can do (pgvector, pg_trgm), read on the first call that needs it: only
   * the lessons' recall and embeddings do, so a command that reads no lesson (`chalk status`)
   * makes one round trip fewer. A failed read is tried again by the next call.
   */
  private shapeRead: Promise<Shape> | null = null;
  private shape(): Promise<Shape> {
    this.shapeRead ??= readShape(this.pool).catch((err: unknown) => {
      this.shapeRead = null;
      throw err;
    });
    return this.shapeRead;
  }

  /**
   * Connects (starting the embedded server when it is the target) and brings the schema up to
   * date. `opts.connecting` is called once the first connection has been asked for, so that a
   * caller can do its own work while the server answers (`chalk status` starts its git then).
   */
  static async open(target: StoreTarget, timeoutMs: number, opts: OpenOptions = {}): Promise<PgStore> {
    const where = target.kind === 'embedded' ? target.paths.socket : describeUrl(target.url);
    let pool: pg.Pool | null = null;
    const sockets = new Set<Socket>();
    try {
      if (target.kind === 'embedded') {
        // Data of another Postgres major is refused before anything reads it (ensureEmbedded checks again).
        checkDataMajor(target.paths);
      }
      const Pool = (await importPg()).Pool;
      if (target.kind === 'embedded') {
        pool = new Pool({
          host: target.paths.dir,
          port: EMBEDDED_PORT,
          user: 'postgres',
          database: 'postgres',
          max: 2,
          connectionTimeoutMillis: timeoutMs,
          // pg's own socket, kept so that close() can let the process exit without waiting for
          // the server to close each connection after it was told to (the embedded server can
          // take tens of milliseconds to).
          stream: () => {
            const socket = new Socket();
            sockets.add(socket);
            socket.once('close', () => sockets.delete(socket));
            return socket;
          },
        });
      } else {
        pool = new Pool({ connectionString: target.url, max: 4, connectionTimeoutMillis: timeoutMs });
      }
      // An idle connection the server dropped must not crash the process; the next query reports it.
      pool.on('error', () => {});
      if (target.kind === 'embedded') {
        // The server most often runs already: connect at once, and start it (or wait for the one
        // starting) only when nothing listens on its socket, instead of probing the socket first.
        const embedded = pool;
        const applied = applySchema(embedded);
        opts.connecting?.();
        await applied.catch(async (err: unknown) => {
          if (!nobodyListens(err)) throw err;
          await ensureEmbedded(target.paths, timeoutMs);
          await applySchema(embedded);
        });
      } else {
        const applied = applySchema(pool);
        opts.connecting?.();
        await applied;
      }
      return new PgStore(pool, target.kind, where, sockets);
    } catch (err) {
      await pool?.end().catch(() => {});
      throw connectionError(err, where, target.kind);
    }
  }

  static forConfig(config: Config, env: NodeJS.ProcessEnv = process.env, opts: OpenOptions = {}): Promise<PgStore> {
    return PgStore.open(storeTarget(config, env), storeTimeoutMs(config), opts);
  }

  readonly calls: Store['calls'] = {
    record: (c) => recordCall(this.pool, c),
    ofRun: (repo, runId) => runTotals(this.pool, repo, runId),
  };

  readonly events = {
    record: (repo: string, ticket: string, kind: Parameters<typeof recordEvent>[3]) =>
      recordEvent(this.pool, repo, ticket, kind),
  };

  readonly lessons: Store['lessons'] = {
    open: (l) => openLesson(this.pool, l),
    resolve: async (r) => resolveLesson(this.pool, await this.shape(), r),
    openByFingerprint: (repo, fp, except) => openByFingerprint(this.pool, repo, fp, except),
    exact: (q) => exactLessons(this.pool, q),
    lexical: async (q) => lexicalLessons(this.pool, await this.shape(), q),
    semanticGate: async () => semanticGate(this.pool, await this.shape()),
    semantic: async (q) => semanticLessons(this.pool, await this.shape(), q),
    unembedded: (limit) => unembeddedLessons(this.pool, limit),
    setEmbedding: async (id, v) => setLessonEmbedding(this.pool, await this.shape(), id, v),
    recordRecalls: (r) => recordRecalls(this.pool, r),
    list: (q) => listLessons(this.pool, q),
    get: (id) => getLesson(this.pool, id),
    setScope: (id, scope) => setLessonScope(this.pool, id, scope),
    forget: (id) => forgetLesson(this.pool, id),
  };

  /** The query plans of one recall (the plan test and bench/recall.mjs). */
  explainRecall(q: Parameters<typeof explainRecall>[2]): ReturnType<typeof explainRecall> {
    return this.shape().then((shape) => explainRecall(this.pool, shape, q));
  }

  readonly decisions: Store['decisions'] = {
    record: (rows) => recordDecisions(this.pool, rows),
    stuckAnswers: () => stuckAnswers(this.pool),
  };

  readonly tickets: Store['tickets'] = { summaries: (repo) => ticketSummaries(this.pool, repo) };

  info(): Promise<StoreInfo> {
    return storeInfo(this.pool, this.kind, this.where);
  }

  /**
   * Ends every connection (each is sent Postgres's Terminate). The process does not stay on for
   * the embedded server to close them: a command that is done exits when its own work is.
   */
  async close(): Promise<void> {
    await this.pool.end();
    for (const socket of this.sockets) socket.unref();
  }
}
