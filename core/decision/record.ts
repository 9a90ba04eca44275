import type { Answer } from '../protocol/codec.js';
import type { FailureKind } from '../protocol/failure.js';
import type { QuestionType } from '../protocol/questions.js';

/**
 * What every decision call leaves, answered or failed: one record, written to
 * every sink the runtime has. The state itself is never recorded (only its
 * price): a record may reach a file or a table.
 */
export interface DecisionRecord {
  /** A fresh id per call. */
  id: string;
  /** When the call started (ISO 8601). */
  at: string;
  entry: string;
  /** The decider's base URL (never with credentials). */
  url: string;
  /** The model that answered, as the decider named it; null when nothing answered. */
  model: string | null;
  questions: Array<{ id: string; type: QuestionType }>;
  /** The answers (a missing key is unknown); null on a failed call. */
  answers: Record<string, Answer> | null;
  failure: { kind: FailureKind; message: string } | null;
  /** The server's `usage.input_tokens` when it sent one, else the estimate. */
  inputTokens: number;
  /** The reservation: the wire body counted by `estimateTokens`. */
  estimatedTokens: number;
  latencyMs: number;
  /** Round trips made (0 when refused before the wire). */
  attempts: number;
  /** The retry budget the call ran under. */
  retries: number;
  /** Caller context (e.g. `run_id`, `kind`, `ticket`), copied as given. */
  tags: Record<string, string>;
}

/** Where records go: the store's `decisions` table, a JSONL file, a test. A sink that fails never fails a call. */
export interface DecisionSink {
  write(record: DecisionRecord): void | Promise<void>;
}
