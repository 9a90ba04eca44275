import type { Pool } from 'pg';
import type { EventKind } from '../ports/store.js';

export const EVENT_KINDS: readonly EventKind[] = ['detention', 'submitted', 'spec_blocked', 'ready'];

/** Records a ticket milestone. */
export async function recordEvent(db: Pool, repo: string, ticket: string, kind: EventKind): Promise<void> {
  if (!EVENT_KINDS.includes(kind)) throw new Error(`unknown event kind '${kind}'`);
  await db.query('INSERT INTO events (repo, ticket, kind) VALUES ($1, $2, $3)', [repo, ticket, kind]);
}
