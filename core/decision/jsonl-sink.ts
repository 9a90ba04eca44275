import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DecisionRecord, DecisionSink } from './record.js';

/** Appends each record as one JSON line (a run's `io/decisions.jsonl`). Writes are serialized, in call order. */
export class JsonlDecisionSink implements DecisionSink {
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  write(record: DecisionRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const next = this.chain.then(async () => {
      await mkdir(dirname(this.path), { recursive: true });
      await appendFile(this.path, line, { mode: 0o600 });
    });
    this.chain = next.catch(() => {});
    return next;
  }
}
