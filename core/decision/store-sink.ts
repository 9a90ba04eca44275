import { readNoul } from './reading.js';
import type { DecisionRecord, DecisionSink } from './record.js';

/**
 * One row of the store's `decisions` table per question asked (original
 * Chalk's columns). The store issue owns the table and its writer; this file
 * only maps a record onto rows, against the writer's interface.
 */
export interface DecisionRow {
  /** `runs.id` of the loop that asked, when known (tag `call_id`). */
  call_id: number | null;
  run_id: string | null;
  /** `stuck`, `rerank`, `why`... (tag `kind`, else the question id). */
  kind: string;
  question: string;
  /** For `lesson_<id>` questions. */
  lesson_id: number | null;
  /** noul: yes or no at or above the threshold, else null (unknown); choice/score: the value as text. */
  answer: string | null;
  confidence: number | null;
  threshold: number;
  /** `kind: message` of a failed call. */
  error: string | null;
  mode: string;
  acted: boolean;
  latency_ms: number;
  model: string | null;
  url: string;
  created_at: string;
}

export interface DecisionRowWriter {
  insertDecisions(rows: DecisionRow[]): Promise<void>;
}

export interface StoreSinkOptions {
  /** CHALK_DECIDER_THRESHOLD. */
  threshold: number;
  /** CHALK_DECIDER (shadow or on). */
  mode: string;
}

export function decisionRows(record: DecisionRecord, opts: StoreSinkOptions): DecisionRow[] {
  const t = record.tags;
  const callId = t.call_id !== undefined && /^[0-9]+$/.test(t.call_id) ? Number(t.call_id) : null;
  return record.questions.map(({ id, type }) => {
    const a = record.answers?.[id];
    let answer: string | null = null;
    let confidence: number | null = null;
    if (a?.type === 'noul' && type === 'noul') {
      const r = readNoul(a, opts.threshold);
      answer = r.answer === 'unknown' ? null : r.answer;
      confidence = r.confidence;
    } else if (a && a.type !== 'noul') {
      confidence = a.confidence;
      answer = a.confidence >= opts.threshold ? String(a.type === 'choice' ? a.choice : a.score) : null;
    }
    const lesson = /^lesson_([0-9]+)$/.exec(id);
    return {
      call_id: callId,
      run_id: t.run_id ?? null,
      kind: t.kind ?? id,
      question: id,
      lesson_id: lesson ? Number(lesson[1]) : null,
      answer,
      confidence,
      threshold: opts.threshold,
      error: record.failure ? `${record.failure.kind}: ${record.failure.message}` : null,
      mode: opts.mode,
      acted: t.acted === 'true',
      latency_ms: record.latencyMs,
      model: record.model,
      url: record.url,
      created_at: record.at,
    };
  });
}

/** The store's sink: the lead wires a DecisionRowWriter from core/store to it. */
export class StoreDecisionSink implements DecisionSink {
  constructor(
    private readonly writer: DecisionRowWriter,
    private readonly opts: StoreSinkOptions,
  ) {}

  write(record: DecisionRecord): Promise<void> {
    return this.writer.insertDecisions(decisionRows(record, this.opts));
  }
}
