/**
 * Recall's bitmaps (share/schema.sql, version 9, and version 10's spec anchors, which have the same
 * rows), read in JavaScript. Pure: the rows one statement fetches go in; out come every recallable
 * lesson in scope with its exact count of trigrams shared with each query text (in spec mode, of
 * its anchors among the spec's trigrams) and its own count.
 *
 * A lesson's slot is its id: chunk id >> 13, bit id & 8191. A row of lesson_bits is one key's
 * lessons in one chunk, as a list (`list`: each slot in two bytes, high byte first) or as an
 * 8,192-bit bitmap (`bits`: 1,024 bytes, the first slot the high bit of the first byte). The count over a query's trigrams adds their bitmaps in bit-sliced
 * form: plane i holds bit i of every slot's count, so a bitmap is added with one carry chain per
 * 32-bit word (about two steps on average), not one step per lesson.
 */

export const CHUNK_BITS = 13;
export const SLOTS = 1 << CHUNK_BITS;
const BYTES = SLOTS / 8;
const WORDS = SLOTS / 32;

/** One row of the fetch: a trigram of the query (`sets`: bit 0 the first text, bit 1 the second) or, with sets 0, a flag or plane. */
export interface BitsRow {
  sets: number;
  kind: string;
  name: string;
  chunk: number;
  list: Uint8Array | null;
  bits: Uint8Array | null;
}

function slotsOf(row: BitsRow): number[] {
  const l = row.list;
  const out: number[] = [];
  if (l) for (let i = 0; i + 1 < l.length; i += 2) out.push(((l[i] as number) << 8) | (l[i + 1] as number));
  return out;
}

/** A key's lessons in one chunk as a bitmap: byte s >> 3, bit 0x80 >> (s & 7). */
function bitmapOf(row: BitsRow | undefined): Uint8Array {
  const out = new Uint8Array(BYTES);
  if (row?.bits) out.set(row.bits.subarray(0, BYTES));
  else if (row) for (const s of slotsOf(row)) out[s >> 3] = (out[s >> 3] as number) | (0x80 >> (s & 7));
  return out;
}

/** Adds `weight` to counts[s] for every slot s of a bitmap (`bytes` from `offset`). */
function addBits(counts: Uint32Array, bytes: Uint8Array, offset: number, weight: number): void {
  for (let byte = 0; byte < BYTES; byte++) {
    let v = bytes[offset + byte] as number;
    while (v !== 0) {
      const bit = 31 - Math.clz32(v);
      v ^= 1 << bit;
      const s = (byte << 3) + 7 - bit;
      counts[s] = (counts[s] as number) + weight;
    }
  }
}

/** Per-slot counts of the rows added: bitmaps bit-sliced, lists one by one. */
class Counter {
  private readonly planes: Int32Array;
  private readonly word = new Int32Array(WORDS);
  private readonly wordBytes = new Uint8Array(this.word.buffer);
  private readonly counts = new Uint32Array(SLOTS);

  constructor(private readonly depth: number) {
    this.planes = new Int32Array(depth * WORDS);
  }

  add(row: BitsRow): void {
    const l = row.list;
    if (l) {
      const counts = this.counts;
      for (let i = 0; i + 1 < l.length; i += 2) {
        const s = ((l[i] as number) << 8) | (l[i + 1] as number);
        counts[s] = (counts[s] as number) + 1;
      }
      return;
    }
    if (!row.bits) return;
    this.wordBytes.set(row.bits.subarray(0, BYTES));
    const p = this.planes;
    const word = this.word;
    for (let w = 0; w < WORDS; w++) {
      let carry = word[w] as number;
      for (let i = w; carry !== 0; i += WORDS) {
        const t = (p[i] as number) & carry;
        p[i] = (p[i] as number) ^ carry;
        carry = t;
      }
    }
  }

  /** Every slot's count: the lists' and the planes'. */
  finish(): Uint32Array {
    const bytes = new Uint8Array(this.planes.buffer);
    for (let i = 0; i < this.depth; i++) addBits(this.counts, bytes, i * BYTES, 2 ** i);
    return this.counts;
  }
}

const bitsFor = (rows: number) => (rows === 0 ? 0 : Math.ceil(Math.log2(rows + 1)));

/** The recallable lessons in scope, with their numbers, by position. */
export interface SlotCounts {
  ids: number[];
  /** Shared trigrams with the first and the second query text. */
  shared: [Uint32Array, Uint32Array];
  /** The lesson's own distinct trigrams (of the family's text). */
  n: Uint32Array;
  /** 1 when the lesson has a first error. */
  withFirstError: Uint8Array;
}

interface Chunk {
  trigrams: BitsRow[];
  flags: Map<string, BitsRow>;
  planes: BitsRow[];
}

/** The fetched rows of one recall, by chunk. */
export class LessonBits {
  private readonly chunks = new Map<number, Chunk>();
  private readonly depth = [0, 0];

  /** `planeKind`: the kind of the family's trigram-count planes ('n' or 'm'). */
  constructor(
    rows: readonly BitsRow[],
    private readonly planeKind: string,
  ) {
    for (const row of rows) {
      let c = this.chunks.get(row.chunk);
      if (!c) {
        c = { trigrams: [], flags: new Map(), planes: [] };
        this.chunks.set(row.chunk, c);
      }
      if (row.sets !== 0) {
        c.trigrams.push(row);
        if (row.sets & 1) this.depth[0] = (this.depth[0] as number) + 1;
        if (row.sets & 2) this.depth[1] = (this.depth[1] as number) + 1;
      } else if (row.kind === this.planeKind) c.planes.push(row);
      else c.flags.set(row.kind, row);
    }
  }

  /** Every recallable lesson in scope (recallable, and the repository's or general), with its counts. */
  counts(): SlotCounts {
    const parts: Array<{
      chunk: number;
      slots: number[];
      a: Uint32Array;
      b: Uint32Array;
      n: Uint32Array;
      e: Uint8Array;
    }> = [];
    for (const [chunk, c] of [...this.chunks.entries()].sort(([x], [y]) => x - y)) {
      const [r, g, e, p] = ['r', 'g', 'e', 'p'].map((k) => bitmapOf(c.flags.get(k))) as [
        Uint8Array,
        Uint8Array,
        Uint8Array,
        Uint8Array,
      ];
      const counters = [new Counter(bitsFor(this.depth[0] as number)), new Counter(bitsFor(this.depth[1] as number))];
      for (const row of c.trigrams) {
        if (row.sets & 1) counters[0]?.add(row);
        if (row.sets & 2) counters[1]?.add(row);
      }
      const n = new Uint32Array(SLOTS);
      for (const pl of c.planes) addBits(n, bitmapOf(pl), 0, 2 ** Number(pl.name));
      const slots: number[] = [];
      for (let byte = 0; byte < BYTES; byte++) {
        let v = (r[byte] as number) & ((p[byte] as number) | (g[byte] as number));
        while (v !== 0) {
          const bit = 31 - Math.clz32(v);
          v ^= 1 << bit;
          slots.push((byte << 3) + 7 - bit);
        }
      }
      parts.push({
        chunk,
        slots,
        a: counters[0]?.finish() as Uint32Array,
        b: counters[1]?.finish() as Uint32Array,
        n,
        e,
      });
    }
    const total = parts.reduce((s, part) => s + part.slots.length, 0);
    const out: SlotCounts = {
      ids: [],
      shared: [new Uint32Array(total), new Uint32Array(total)],
      n: new Uint32Array(total),
      withFirstError: new Uint8Array(total),
    };
    let k = 0;
    for (const part of parts)
      for (const s of part.slots) {
        out.ids.push(part.chunk * SLOTS + s);
        out.shared[0][k] = part.a[s] as number;
        out.shared[1][k] = part.b[s] as number;
        out.n[k] = part.n[s] as number;
        out.withFirstError[k] = ((part.e[s >> 3] as number) >> (7 - (s & 7))) & 1;
        k++;
      }
    return out;
  }
}

/** pg_trgm's similarity from the counts (cnt_sml: shared / (n + m - shared) in float4). */
export function similarityOf(shared: number, n: number, m: number): number {
  if (shared === 0 || n === 0 || m === 0) return 0;
  return Math.fround(shared / (n + m - shared));
}
