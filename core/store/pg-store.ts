import type pg from 'pg';
import type { Config } from '../config/config.js';
import type { Store, StoreInfo } from '../ports/store.js';
import { recordCall, runTotals } from './calls.js';
import { recordDecisions, stuckAnswers } from './decisions.js';
import { ensureEmbedded } from './embedded/ensure.js';
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

/** The store on a `pg` pool: the same code for the embedded server and any Postgres server. */
export class PgStore implements Store {
  private constructor(
    readonly pool: pg.Pool,
    readonly kind: 'embedded' | 'server',
    readonly where: string,
    private readonly shape: Shape,
  ) {}

  /** Connects (starting the embedded server when it is the target) and brings the schema up to date. */
  static async open(target: StoreTarget, timeoutMs: number): Promise<PgStore> {
    const where = target.kind === 'embedded' ? target.paths.socket : describeUrl(target.url);
    let pool: pg.Pool | null = null;
    try {
      const [{ Pool }] = await Promise.all([
        importPg(),
        target.kind === 'embedded' ? ensureEmbedded(target.paths, timeoutMs) : null,
      ]);
      if (target.kind === 'embedded') {
        pool = new Pool({
          host: target.paths.dir,
          port: EMBEDDED_PORT,
          user: 'postgres',
          database: 'postgres',
          max: 2,
          connectionTimeoutMillis: timeoutMs,
        });
      } else {
        pool = new Pool({ connectionString: target.url, max: 4, connectionTimeoutMillis: timeoutMs });
      }
      // An idle connection the server dropped must not crash the process; the next query reports it.
      pool.on('error', () => {});
      await applySchema(pool);
      return new PgStore(pool, target.kind, where, await readShape(pool));
    } catch (err) {
      await pool?.end().catch(() => {});
      throw connectionError(err, where, target.kind);
    }
  }

  static forConfig(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<PgStore> {
    return PgStore.open(storeTarget(config, env), storeTimeoutMs(config));
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
    resolve: (r) => resolveLesson(this.pool, this.shape, r),
    openByFingerprint: (repo, fp, except) => openByFingerprint(this.pool, repo, fp, except),
    exact: (q) => exactLessons(this.pool, q),
    lexical: (q) => lexicalLessons(this.pool, this.shape, q),
    semanticGate: () => semanticGate(this.pool, this.shape),
    semantic: (q) => semanticLessons(this.pool, this.shape, q),
    unembedded: (limit) => unembeddedLessons(this.pool, limit),
    setEmbedding: (id, v) => setLessonEmbedding(this.pool, this.shape, id, v),
    recordRecalls: (r) => recordRecalls(this.pool, r),
    list: (q) => listLessons(this.pool, q),
    get: (id) => getLesson(this.pool, id),
    setScope: (id, scope) => setLessonScope(this.pool, id, scope),
    forget: (id) => forgetLesson(this.pool, id),
  };

  /** The query plans of one recall (the plan test and bench/recall.mjs). */
  explainRecall(q: Parameters<typeof explainRecall>[2]): ReturnType<typeof explainRecall> {
    return explainRecall(this.pool, this.shape, q);
  }

  readonly decisions: Store['decisions'] = {
    record: (rows) => recordDecisions(this.pool, rows),
    stuckAnswers: () => stuckAnswers(this.pool),
  };

  readonly tickets: Store['tickets'] = { summaries: (repo) => ticketSummaries(this.pool, repo) };

  info(): Promise<StoreInfo> {
    return storeInfo(this.pool, this.kind, this.where);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
