import type { Plugin } from '../kernel/kernel.js';
import { Tokens } from '../kernel/tokens.js';
import type { Store } from '../ports/store.js';
import { databaseCheck } from './doctor.js';
import { PgStore } from './pg-store.js';
import { storeTarget } from './target.js';

/**
 * Binds Tokens.Store to the Postgres store (embedded PGlite server, or CHALK_DATABASE_URL)
 * and adds the database line to `chalk doctor`. Connecting is lazy: nothing is started or
 * opened until a command first calls the store, so commands that never touch the database
 * never start the server. Listed in plugins/builtin.ts; a later plugin may bind its own Store.
 */
export const storePlugin: Plugin = {
  name: 'store',
  register(kernel) {
    kernel.bind(Tokens.Store, {
      useValue: lazyStore(storeTarget(kernel.config).kind, () => PgStore.forConfig(kernel.config)),
    });
    kernel.checks.push(databaseCheck(kernel.config));
  },
};

/** A Store whose every call first awaits the connection, made once on first use. */
export function lazyStore(kind: Store['kind'], connect: () => Promise<Store>): Store {
  let opened: Promise<Store> | null = null;
  const open = () => {
    opened ??= connect();
    return opened;
  };
  return {
    kind,
    calls: {
      record: async (c) => (await open()).calls.record(c),
      ofRun: async (repo, runId) => (await open()).calls.ofRun(repo, runId),
    },
    events: { record: async (repo, ticket, k) => (await open()).events.record(repo, ticket, k) },
    lessons: {
      open: async (l) => (await open()).lessons.open(l),
      resolve: async (r) => (await open()).lessons.resolve(r),
      openByFingerprint: async (repo, fp, except) => (await open()).lessons.openByFingerprint(repo, fp, except),
      exact: async (q) => (await open()).lessons.exact(q),
      lexical: async (q) => (await open()).lessons.lexical(q),
      semanticGate: async () => (await open()).lessons.semanticGate(),
      semantic: async (q) => (await open()).lessons.semantic(q),
      unembedded: async (limit) => (await open()).lessons.unembedded(limit),
      setEmbedding: async (id, v) => (await open()).lessons.setEmbedding(id, v),
      recordRecalls: async (r) => (await open()).lessons.recordRecalls(r),
      list: async (q) => (await open()).lessons.list(q),
      get: async (id) => (await open()).lessons.get(id),
      setScope: async (id, scope) => (await open()).lessons.setScope(id, scope),
      forget: async (id) => (await open()).lessons.forget(id),
    },
    decisions: {
      record: async (rows) => (await open()).decisions.record(rows),
      stuckAnswers: async () => (await open()).decisions.stuckAnswers(),
    },
    tickets: { summaries: async (repo) => (await open()).tickets.summaries(repo) },
    info: async () => (await open()).info(),
    close: async () => {
      if (opened) await (await opened).close();
      opened = null;
    },
  };
}
