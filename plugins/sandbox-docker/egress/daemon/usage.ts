import type { TokenUsage } from './prices.js';

/**
 * The tokens one Messages API response reports, read from the bytes the gateway relays: the
 * streamed events (`message_start` carries the model and the input side, `message_delta` the
 * output so far; both may carry running totals, so the largest of each count wins) or a whole
 * JSON message. Bounded: an event or a body past its cap is not read, and the response counts
 * as unmetered.
 */

export interface ResponseUsage extends TokenUsage {
  model: string;
}

const EVENT_CAP = 1024 * 1024;
const JSON_CAP = 16 * 1024 * 1024;

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (v !== null && typeof v === 'object' ? (v as Raw) : {});

function addUsage(into: ResponseUsage, raw: unknown): void {
  const u = obj(raw);
  const cache = obj(u.cache_creation);
  into.inputTokens = Math.max(into.inputTokens, num(u.input_tokens));
  into.outputTokens = Math.max(into.outputTokens, num(u.output_tokens));
  into.cacheReadTokens = Math.max(into.cacheReadTokens, num(u.cache_read_input_tokens));
  into.cacheCreationTokens = Math.max(into.cacheCreationTokens, num(u.cache_creation_input_tokens));
  into.cacheCreation1hTokens = Math.max(into.cacheCreation1hTokens, num(cache.ephemeral_1h_input_tokens));
}

const empty = (): ResponseUsage => ({
  model: '',
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  cacheCreation1hTokens: 0,
});

export class UsageMeter {
  private readonly usage = empty();
  private seen = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overflow = false;

  constructor(private readonly streamed: boolean) {}

  push(chunk: Buffer): void {
    if (this.overflow) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (!this.streamed) {
      if (this.pendingBytes > JSON_CAP) this.drop();
      return;
    }
    let text = Buffer.concat(this.pending).toString('latin1');
    let cut = text.indexOf('\n\n');
    while (cut >= 0) {
      this.event(Buffer.from(text.slice(0, cut), 'latin1').toString('utf8'));
      text = text.slice(cut + 2);
      cut = text.indexOf('\n\n');
    }
    this.pending = text === '' ? [] : [Buffer.from(text, 'latin1')];
    this.pendingBytes = text.length;
    // A single event this long is not one the API sends: stop reading this response.
    if (this.pendingBytes > EVENT_CAP) this.drop();
  }

  private drop(): void {
    this.overflow = true;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private event(block: string): void {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data === '') return;
    let ev: Raw;
    try {
      ev = obj(JSON.parse(data));
    } catch {
      return;
    }
    if (ev.type === 'message_start') {
      const m = obj(ev.message);
      if (typeof m.model === 'string') this.usage.model = m.model.slice(0, 200);
      addUsage(this.usage, m.usage);
      this.seen = true;
    } else if (ev.type === 'message_delta') {
      addUsage(this.usage, ev.usage);
      this.seen = true;
    }
  }

  /** The response's usage, or null when it reported none the meter could read. */
  end(): ResponseUsage | null {
    if (this.overflow) return null;
    if (this.streamed) {
      if (this.pendingBytes > 0) this.event(Buffer.concat(this.pending).toString('utf8'));
      return this.seen ? this.usage : null;
    }
    try {
      const body = obj(JSON.parse(Buffer.concat(this.pending).toString('utf8')));
      if (body.usage === undefined) return null;
      if (typeof body.model === 'string') this.usage.model = body.model.slice(0, 200);
      addUsage(this.usage, body.usage);
      return this.usage;
    } catch {
      return null;
    }
  }
}
