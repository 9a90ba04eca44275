import type { Store, DecisionRecord as StoreDecision } from '../ports/store.js';
import { readNoul } from './reading.js';
import type { DecisionRecord, DecisionSink } from './record.js';

/**
 * The store's sink: one `decisions` row per question of a loop's decision
 * (original Chalk's table: kind `stuck` or `rerank`). The lead wires it to the
 * bound Store (`new StoreDecisionSink(store.decisions, {...})`); a decision of
 * another kind (e.g. `chalk why`'s) is not a loop question and is left to the
 * other sinks (the run's decisions.jsonl).
 *
 * Tags read from the record: `kind` (stuck|rerank), `run_id`, `call_id`,
 * `loop`, `acted` ('true'), `mode` (shadow|on: what the row is recorded under,
 * when the caller held `on` to `shadow`; else the sink's own).
 */
export interface StoreSinkOptions {
  /** CHALK_DECIDER_THRESHOLD. */
  threshold: number;
  /** CHALK_DECIDER (shadow or on). */
  mode: 'shadow' | 'on';
}

const int = (v: string | undefined) => (v !== undefined && /^[0-9]+$/.test(v) ? Number(v) : null);

export function storeRows(record: DecisionRecord, opts: StoreSinkOptions): StoreDecision[] {
  const t = record.tags;
  if (t.kind !== 'stuck' && t.kind !== 'rerank') return [];
  const kind = t.kind;
  return record.questions.map(({ id, type }) => {
    const a = record.answers?.[id];
    let answer: 'yes' | 'no' | null = null;
    let confidence: number | null = null;
    if (a?.type === 'noul' && type === 'noul') {
      const r = readNoul(a, opts.threshold);
      answer = r.answer === 'unknown' ? null : r.answer;
      confidence = r.confidence;
    } else if (a && a.type !== 'noul') {
      confidence = a.confidence;
    }
    const lesson = /^lesson_([0-9]+)$/.exec(id);
    return {
      runId: t.run_id ?? null,
      callId: int(t.call_id),
      loop: int(t.loop),
      kind,
      question: id,
      answer,
      confidence,
      threshold: opts.threshold,
      mode: t.mode === 'shadow' || t.mode === 'on' ? t.mode : opts.mode,
      // The column is whole milliseconds.
      latencyMs: Math.round(record.latencyMs),
      acted: t.acted === 'true',
      lessonId: lesson ? Number(lesson[1]) : null,
      model: record.model,
      error: record.failure ? `${record.failure.kind}: ${record.failure.message}` : null,
      url: record.url,
    };
  });
}

export class StoreDecisionSink implements DecisionSink {
  constructor(
    private readonly decisions: Pick<Store['decisions'], 'record'>,
    private readonly opts: StoreSinkOptions,
  ) {}

  async write(record: DecisionRecord): Promise<void> {
    const rows = storeRows(record, this.opts);
    if (rows.length > 0) await this.decisions.record(rows);
  }
}
