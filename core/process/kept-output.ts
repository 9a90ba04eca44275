import { KEPT_OUTPUT_BYTES } from '../ports/sandbox.js';

/**
 * Keeps what the host holds of one stream: the whole of it up to
 * KEPT_OUTPUT_BYTES, else the head and the last quarter with a marker between.
 */
export class KeptOutput {
  private head = '';
  private headBytes = 0;
  private tail: string[] = [];
  private tailBytes = 0;
  private dropped = 0;
  private readonly headCap = (KEPT_OUTPUT_BYTES * 3) / 4;
  private readonly tailCap = KEPT_OUTPUT_BYTES / 4;

  add(s: string): void {
    const n = Buffer.byteLength(s);
    if (this.headBytes + n <= this.headCap && this.tail.length === 0) {
      this.head += s;
      this.headBytes += n;
      return;
    }
    this.tail.push(s);
    this.tailBytes += n;
    while (this.tailBytes > this.tailCap && this.tail.length > 1) {
      const first = this.tail.shift() as string;
      const b = Buffer.byteLength(first);
      this.tailBytes -= b;
      this.dropped += b;
    }
  }

  text(): string {
    const tail = this.tail.join('');
    if (this.dropped === 0) return this.head + tail;
    return `${this.head}\n[chalk: ${this.dropped} bytes of output not kept]\n${tail}`;
  }
}
