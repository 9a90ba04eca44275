import { RECALL_LIMIT } from '../ports/lesson-memory.js';
import type { Store } from '../ports/store.js';
import type { LadderRung } from './ladder.js';

/** The exact rung: same repository, same non-empty fingerprint (failure mode only). */
export function exactRung(store: Store, limit = RECALL_LIMIT): LadderRung {
  return {
    name: 'exact',
    async climb(key, found) {
      if (!key.fingerprint) return [...found];
      const exact = await store.lessons.exact({ repo: key.repo, fingerprint: key.fingerprint, limit });
      return [...found, ...exact.map((l) => ({ ...l, how: 'exact' as const }))];
    },
  };
}

/** The lexical rung: pg_trgm similarity by the key's mode (LexicalQuery), after what earlier rungs found. */
export function lexicalRung(store: Store, limit = RECALL_LIMIT): LadderRung {
  return {
    name: 'lexical',
    async climb(key, found) {
      const lexical = await store.lessons.lexical({
        repo: key.repo,
        mode: key.mode,
        query: key.query,
        firstError: key.firstError,
        limit,
      });
      return [...found, ...lexical.map((l) => ({ ...l, how: 'lexical' as const }))];
    },
  };
}

/** The default ladder over the store: exact, then lexical. */
export const storeLadder = (store: Store): LadderRung[] => [exactRung(store), lexicalRung(store)];
