import type { Decider, DecisionClient } from '../ports/decider.js';
import type { DeciderEntry } from '../protocol/entry.js';
import type { DecisionRequest } from '../protocol/questions.js';
import { Admission } from './admission.js';
import { type CallContext, type CallOptions, DecisionCall } from './call.js';
import type { Decision } from './reading.js';
import type { DecisionRecord, DecisionSink } from './record.js';

/**
 * The observable wrapper every decision goes through: one entry, its client,
 * its admission line, and the sinks that read each call's one record (the
 * store's `decisions` table, a run's JSONL file, a test). Keep one runtime per
 * entry per process, so admission sees every call (`runtimeFor`).
 */
export class DecisionRuntime {
  readonly admission: Admission;
  private readonly sinks = new Set<DecisionSink>();

  constructor(
    readonly entry: DeciderEntry,
    readonly client: DecisionClient,
    private readonly onSinkError: (err: unknown) => void = () => {},
  ) {
    this.admission = new Admission(entry.limit);
    this.ctx = { entry, client, admission: this.admission, emit: (r) => this.emit(r) };
  }

  /** What every call of this runtime runs on (one object, not one per call). */
  private readonly ctx: CallContext;

  /** Adds a sink; returns the function that removes it. */
  observe(sink: DecisionSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /** A call bound to this runtime; set its request (if not given) before capturing its requirements. */
  call(request?: DecisionRequest, opts: CallOptions = {}): DecisionCall {
    return new DecisionCall(this.ctx, request, opts);
  }

  /** Asks once (within the retry budget) and records it. Never throws for a decider's failure. */
  decide(request: DecisionRequest, opts: CallOptions = {}): Promise<Decision> {
    return this.call(request, opts).run();
  }

  /** Writes the record to every sink; waits only for sinks that return a promise. */
  private emit(record: DecisionRecord): Promise<void> | undefined {
    let pending: Array<Promise<void>> | undefined;
    for (const s of this.sinks) {
      try {
        const r = s.write(record);
        if (r && typeof (r as Promise<void>).then === 'function') {
          pending ??= [];
          pending.push((r as Promise<void>).catch((err) => this.onSinkError(err)));
        }
      } catch (err) {
        this.onSinkError(err);
      }
    }
    return pending ? Promise.all(pending).then(() => undefined) : undefined;
  }
}

const runtimes = new WeakMap<Decider, DecisionRuntime>();

/** The one runtime of a bound decider in this process. */
export function runtimeFor(decider: Decider, onSinkError?: (err: unknown) => void): DecisionRuntime {
  let r = runtimes.get(decider);
  if (!r) {
    r = new DecisionRuntime(decider.entry, decider, onSinkError);
    runtimes.set(decider, r);
  }
  return r;
}
