import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../../core/store/index.js';
import { BACKENDS, rawPool } from './backends.js';

/**
 * What office hours writes, on both stores: a resolution with no distilled
 * lesson (NULL, not ''), each scope as given, who and when; the ticket counts it.
 */
describe.each(BACKENDS)('office hours resolutions on $name', (backend) => {
  let db: Awaited<ReturnType<typeof backend.fresh>>;
  let store: PgStore;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await backend.fresh();
    store = await PgStore.open(db.target, 120_000);
    pool = await rawPool(db.target);
  });
  afterAll(async () => {
    await pool?.end();
    await store?.close();
    await db?.dispose();
  });

  it('keeps the note with a NULL lesson for none, the scope as given, who and when', async () => {
    const repo = 'oh';
    const none = await store.lessons.open({ repo, ticket: 'OH-1', signature: 'rubric failed' });
    const general = await store.lessons.open({ repo, ticket: 'OH-1', signature: 'rubric failed again' });
    await store.lessons.resolve({ id: none, resolution: 'the note', lesson: null, resolvedBy: 'a@x', scope: 'none' });
    await store.lessons.resolve({
      id: general,
      resolution: 'n2',
      lesson: 'When X, do Y.',
      resolvedBy: 'b',
      scope: 'general',
    });
    const rows = (
      await pool.query('SELECT id, resolution, lesson, resolved_by, scope, resolved_at FROM lessons ORDER BY id')
    ).rows;
    expect(rows.map((r) => [Number(r.id), r.resolution, r.lesson, r.resolved_by, r.scope])).toEqual([
      [none, 'the note', null, 'a@x', 'none'],
      [general, 'n2', 'When X, do Y.', 'b', 'general'],
    ]);
    expect(rows.every((r) => r.resolved_at instanceof Date)).toBe(true);
    const [t] = await store.tickets.summaries(repo);
    expect(t).toMatchObject({ ticket: 'OH-1', fixes: 2 });
  });
});
