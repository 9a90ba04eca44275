import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../core/ports/embedder.js';
import { MemoryStore } from '../../core/testing/store.js';
import { backfillAfterHealth, backfillLocal, targetFromChild } from '../../plugins/decider-local/backfill.js';

const vector = Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0));

async function resolved(store: MemoryStore, note: string) {
  const id = await store.lessons.open({ repo: 'shop', ticket: 'T-1', signature: 'sig' });
  await store.lessons.resolve({ id, resolution: note, lesson: null, resolvedBy: 'me' });
  return id;
}

describe('the back-fill after the local services are healthy', () => {
  it('writes every missing lesson embedding, says how many, and closes the store', async () => {
    const store = new MemoryStore();
    const a = await resolved(store, 'first');
    const b = await resolved(store, 'second');
    const embedder: Embedder = { dimensions: 384, embed: async (t) => t.map(() => vector) };
    const line = await backfillAfterHealth({ store: async () => store, embedder });
    expect(line).toBe('2 lesson embeddings back-filled');
    expect([...store.tables.embeddings.keys()]).toEqual([a, b]);
    expect(store.closed).toBe(true);
  });

  it('is one line, never an error, when the service stops answering or the store cannot be opened', async () => {
    const store = new MemoryStore();
    await resolved(store, 'first');
    const down: Embedder = {
      dimensions: 384,
      embed: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:8472');
      },
    };
    expect(await backfillAfterHealth({ store: async () => store, embedder: down })).toBe(
      '0 lesson embeddings back-filled, then stopped: connect ECONNREFUSED 127.0.0.1:8472',
    );
    const noStore = async () => {
      throw new Error('could not reach the database\nmore detail');
    };
    expect(await backfillAfterHealth({ store: noStore, embedder: down })).toBe(
      'no lesson embeddings back-filled: could not reach the database',
    );
  });

  it('makes no embedded database for it, and learns a server from the environment, never argv', async () => {
    const line = await backfillLocal({
      target: { kind: 'embedded', paths: { dir: '/nonexistent/db', data: '/nonexistent/db/data' } as never },
      timeoutMs: 1_000,
      embedPort: 9,
    });
    expect(line).toBe('no lessons to back-fill (no database yet)');
    expect(targetFromChild({ dbDir: '/s/db', env: { CHALK_DATABASE_URL: 'postgres://u:pw@h/db' } })).toEqual({
      kind: 'server',
      url: 'postgres://u:pw@h/db',
    });
    expect(targetFromChild({ dbDir: '/s/db', env: {} })).toMatchObject({ kind: 'embedded', paths: { dir: '/s/db' } });
    expect(targetFromChild({ dbDir: undefined, env: {} })).toBeNull();
  });
});
