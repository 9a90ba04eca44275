import { KEPT_OUTPUT_BYTES } from '../ports/sandbox.js';

/**
 * Keeps what the host holds of one stream, as the bytes that came: the whole of it up to
 * KEPT_OUTPUT_BYTES, else the head and the last quarter with a marker between. Chunks are
 * kept as they came (never joined until asked for), and read as UTF-8 only by `text()`.
 */
export class KeptOutput {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  private dropped = 0;
  private readonly headCap = (KEPT_OUTPUT_BYTES * 3) / 4;
  private readonly tailCap = KEPT_OUTPUT_BYTES / 4;

  add(chunk: Uint8Array | string): void {
    const b =
      typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const n = b.length;
    if (this.headBytes + n <= this.headCap && this.tail.length === 0) {
      this.head.push(b);
      this.headBytes += n;
      return;
    }
    this.tail.push(b);
    this.tailBytes += n;
    while (this.tailBytes > this.tailCap && this.tail.length > 1) {
      const first = this.tail.shift() as Buffer;
      this.tailBytes -= first.length;
      this.dropped += first.length;
    }
  }

  /** What is kept, as bytes: the head, then (when some was dropped) the marker and the tail. */
  bytes(): Buffer {
    if (this.dropped === 0) return Buffer.concat([...this.head, ...this.tail]);
    const marker = Buffer.from(`\n[chalk: ${this.dropped} bytes of output not kept]\n`);
    return Buffer.concat([...this.head, marker, ...this.tail]);
  }

  /** What is kept, read as UTF-8 (an invalid sequence becomes U+FFFD). */
  text(): string {
    return this.bytes().toString('utf8');
  }
}

/**
 * Holds back a stream's incomplete last character until its next chunk: chunks of two
 * streams put one after the other (stdout and stderr into one log) then never cut a
 * character in two, as each stream's own decoder would not have.
 */
export class WholeChars {
  private rest: Buffer | null = null;

  /** The chunk, with what was held back before it, up to its last whole character. */
  take(chunk: Uint8Array): Buffer {
    const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const all = this.rest === null ? b : Buffer.concat([this.rest, b]);
    const cut = wholeUpTo(all);
    this.rest = cut < all.length ? Buffer.from(all.subarray(cut)) : null;
    return all.subarray(0, cut);
  }

  /** What is still held back (an incomplete character the stream ended with). */
  end(): Buffer {
    const rest = this.rest ?? Buffer.alloc(0);
    this.rest = null;
    return rest;
  }
}

/**
 * Where the bytes' incomplete last character starts: the start of a UTF-8 lead byte among the
 * last three whose sequence the bytes end before completing, else their length.
 */
export function wholeUpTo(b: Uint8Array): number {
  for (let i = b.length - 1; i >= 0 && i >= b.length - 3; i--) {
    const c = b[i] as number;
    if (c >= 0x80 && c < 0xc0) continue; // a continuation byte: the lead is further back
    const need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 1;
    return b.length - i < need ? i : b.length;
  }
  return b.length;
}
