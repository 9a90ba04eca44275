import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlDecisionSink } from '../../core/decision/jsonl-sink.js';
import type { DecisionRecord } from '../../core/decision/record.js';
import { StoreDecisionSink, storeRows } from '../../core/decision/store-sink.js';
import type { DecisionRecord as StoreRow } from '../../core/ports/store.js';

const record = (over: Partial<DecisionRecord> = {}): DecisionRecord => ({
  id: 'c0ffee',
  at: '2026-12-01T00:00:00.000Z',
  entry: 'decider',
  url: 'http://127.0.0.1:8471',
  model: 'strands-decider-2B-v19',
  questions: [
    { id: 'stuck', type: 'noul' },
    { id: 'lesson_12', type: 'noul' },
    { id: 'lesson_13', type: 'noul' },
  ],
  answers: { stuck: { type: 'noul', noul: 0.96 }, lesson_12: { type: 'noul', noul: 0.3 } },
  failure: null,
  inputTokens: 120,
  estimatedTokens: 120,
  latencyMs: 141.2,
  attempts: 1,
  retries: 0,
  tags: { kind: 'stuck', run_id: 'run-1', call_id: '42', loop: '3' },
  ...over,
});

describe('decision sinks', () => {
  it('maps a loop decision onto one decisions row per question, unknown below the threshold', () => {
    const rows = storeRows(record(), { threshold: 0.9, mode: 'shadow' });
    expect(rows.map((r) => [r.question, r.answer, r.confidence, r.lessonId])).toEqual([
      ['stuck', 'yes', 0.96, null],
      ['lesson_12', null, 0.7, 12],
      ['lesson_13', null, null, 13],
    ]);
    expect(rows[0]).toMatchObject({
      runId: 'run-1',
      callId: 42,
      loop: 3,
      kind: 'stuck',
      mode: 'shadow',
      threshold: 0.9,
      latencyMs: 141, // whole milliseconds, as the column holds them
      model: 'strands-decider-2B-v19',
      error: null,
      acted: false,
    });
  });

  it('records a failed call with its reason, and leaves decisions of other kinds to other sinks', async () => {
    const failed = record({
      answers: null,
      model: null,
      failure: { kind: 'timeout', message: 'no full answer within the time left' },
    });
    expect(storeRows(failed, { threshold: 0.9, mode: 'on' }).map((r) => r.error)).toEqual([
      'timeout: no full answer within the time left',
      'timeout: no full answer within the time left',
      'timeout: no full answer within the time left',
    ]);
    const written: StoreRow[][] = [];
    const sink = new StoreDecisionSink(
      {
        record: async (rows) => {
          written.push(rows);
          return rows.length;
        },
      },
      { threshold: 0.9, mode: 'on' },
    );
    await sink.write(record({ tags: { kind: 'why' } }));
    expect(written).toEqual([]);
    await sink.write(failed);
    expect(written[0]).toHaveLength(3);
  });

  it('appends one JSON line per record, in order', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'chalk-sink-')), 'io', 'decisions.jsonl');
    const sink = new JsonlDecisionSink(path);
    await Promise.all([sink.write(record({ id: 'a' })), sink.write(record({ id: 'b' }))]);
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DecisionRecord);
    expect(lines.map((l) => l.id)).toEqual(['a', 'b']);
  });
});
