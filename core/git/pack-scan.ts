import { createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { createInflate, inflateSync } from 'node:zlib';

/**
 * A sandbox's bundle read the way `git fetch` would inflate it, before git
 * does, without keeping any object: `git index-pack` builds every delta's
 * result in memory, so a pack of one kilobyte can make the host's git
 * allocate gigabytes (a delta that copies a 1 MiB blob four thousand times),
 * and a 1 MiB blob of zeros inflates to a gigabyte. Each entry's declared size
 * is read before it is inflated: the pack is refused as soon as the objects
 * would pass the caps, so reading it costs at most what the caps allow.
 */

/** How far into a bundle its header (signature, prerequisites, heads) may reach before the pack. */
const HEADER_MAX_BYTES = 1024 * 1024;
/**
 * The largest result a delta may declare. Git never writes a delta for an object over its
 * `core.bigFileThreshold` (512 MiB by default), and index-pack holds each result in memory.
 */
export const DELTA_RESULT_MAX = 512 * 1024 * 1024;
/** Objects up to this size are inflated in one call; bigger ones are streamed. */
const SMALL = 1024 * 1024;

const OBJ_OFS_DELTA = 6;
const OBJ_REF_DELTA = 7;

export interface PackLimits {
  maxObjects: number;
  /** Bytes all the objects may inflate to, delta results counted at their declared size. */
  maxBytes: number;
}

export type PackVerdict =
  | { ok: true; objects: number; bytes: number }
  | { ok: false; why: 'objects' | 'bytes' | 'delta' | 'unreadable'; objects: number; bytes: number };

/** Where the pack starts in a bundle and how long object ids are, or null without a readable header. */
async function packStart(fd: FileHandle): Promise<{ start: number; hashBytes: number } | null> {
  const buf = Buffer.alloc(HEADER_MAX_BYTES + 12);
  const { bytesRead } = await fd.read(buf, 0, buf.length, 0);
  const head = buf.subarray(0, bytesRead);
  if (!/^# v[23] git bundle\n/.test(head.subarray(0, 16).toString('latin1'))) return null;
  // The header's lines are never empty: it ends at the first empty line.
  const end = head.indexOf('\n\n');
  if (end < 0) return null;
  const hashBytes = /\n@object-format=sha256\n/.test(head.subarray(0, end + 1).toString('latin1')) ? 32 : 20;
  const pack = head.subarray(end + 2, end + 14);
  if (pack.length < 12 || pack.subarray(0, 4).toString('latin1') !== 'PACK') return null;
  return { start: end + 2, hashBytes };
}

/** A head a bundle's header names: `<object id> <ref name>`. */
export interface BundleHead {
  sha: string;
  name: string;
}

const OID_HEX = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The heads a bundle's header names (what `git bundle list-heads` prints), read from its first
 * bytes; null when the header is not a v2 or v3 bundle's, or a line of it is not one git writes.
 * git reads the same header again when it fetches, and refuses what it does not take.
 */
export async function bundleHeadsOf(path: string): Promise<BundleHead[] | null> {
  const fd = await open(path, 'r');
  try {
    const buf = Buffer.alloc(HEADER_MAX_BYTES);
    const { bytesRead } = await fd.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    const end = head.indexOf('\n\n');
    if (end < 0) return null;
    const [signature, ...lines] = head.subarray(0, end).toString('utf8').split('\n');
    if (signature !== '# v2 git bundle' && signature !== '# v3 git bundle') return null;
    const heads: BundleHead[] = [];
    for (const line of lines) {
      if (line.startsWith('@') && signature === '# v3 git bundle') continue;
      if (line.startsWith('-')) {
        if (!OID_HEX.test(line.slice(1).split(' ')[0] ?? '')) return null;
        continue;
      }
      const i = line.indexOf(' ');
      const sha = i < 0 ? line : line.slice(0, i);
      if (!OID_HEX.test(sha) || i < 0) return null;
      heads.push({ sha, name: line.slice(i + 1) });
    }
    return heads;
  } finally {
    await fd.close();
  }
}

/** A varint of 7-bit groups, least significant first (a delta's sizes). */
function deltaSize(buf: Buffer, at: number): { value: number; next: number } | null {
  let value = 0;
  let shift = 0;
  for (let i = at; i < buf.length && shift < 56; i++) {
    const b = buf[i] as number;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  return null;
}

interface Entry {
  type: number;
  /** The declared size: the object's, or the delta data's for a delta. */
  size: number;
  /** Where its zlib stream starts. */
  data: number;
}

/** An entry's header at `pos`: type, size, and (for a delta) its base, skipped. */
async function readEntry(fd: FileHandle, pos: number, hashBytes: number): Promise<Entry | null> {
  const buf = Buffer.alloc(32 + hashBytes);
  const { bytesRead } = await fd.read(buf, 0, buf.length, pos);
  let i = 0;
  let c = buf[i++] as number;
  const type = (c >> 4) & 7;
  let size = c & 15;
  let shift = 4;
  while (c & 0x80) {
    if (i >= bytesRead || shift > 49) return null;
    c = buf[i++] as number;
    size += (c & 0x7f) * 2 ** shift;
    shift += 7;
  }
  if (type === OBJ_OFS_DELTA) {
    do {
      if (i >= bytesRead) return null;
      c = buf[i++] as number;
    } while (c & 0x80);
  } else if (type === OBJ_REF_DELTA) i += hashBytes;
  if (type === 0 || type === 5 || i > bytesRead) return null;
  return { type, size, data: pos + i };
}

/**
 * Inflates one entry's zlib stream from `at`, keeping at most its first bytes: how many input
 * bytes it took and those first bytes; null when it inflates to more than `size` or is corrupt.
 */
async function inflateEntry(
  fd: FileHandle,
  path: string,
  at: number,
  size: number,
): Promise<{ used: number; head: Buffer } | null> {
  if (size <= SMALL) {
    // Deflate grows incompressible data by at most 5 bytes per 16 KiB block, plus its header.
    const buf = Buffer.alloc(size + Math.ceil(size / 16384) * 5 + 64);
    const { bytesRead } = await fd.read(buf, 0, buf.length, at);
    try {
      const r = inflateSync(buf.subarray(0, bytesRead), { info: true, maxOutputLength: size + 1 }) as unknown as {
        buffer: Buffer;
        engine: { bytesWritten: number };
      };
      return r.buffer.length === size ? { used: r.engine.bytesWritten, head: r.buffer.subarray(0, 32) } : null;
    } catch {
      return null;
    }
  }
  return new Promise((resolve) => {
    const input = createReadStream(path, { start: at, highWaterMark: 256 * 1024 });
    const inflate = createInflate();
    let out = 0;
    let head = Buffer.alloc(0);
    const done = (r: { used: number; head: Buffer } | null) => {
      input.destroy();
      inflate.destroy();
      resolve(r);
    };
    inflate.on('data', (d: Buffer) => {
      if (head.length < 32) head = Buffer.concat([head, d.subarray(0, 32)]);
      out += d.length;
      if (out > size) done(null);
    });
    inflate.on('end', () => done(out === size ? { used: inflate.bytesWritten, head } : null));
    inflate.on('error', () => done(null));
    input.on('error', () => done(null));
    input.pipe(inflate);
  });
}

/**
 * Walks the pack of the bundle at `path`: its object count, then each entry's declared size (a
 * delta's result read from its first bytes), stopping at the first cap passed.
 */
export async function scanBundlePack(path: string, limits: PackLimits): Promise<PackVerdict> {
  const fd = await open(path, 'r');
  let objects = 0;
  let bytes = 0;
  const no = (why: 'objects' | 'bytes' | 'delta' | 'unreadable'): PackVerdict => ({ ok: false, why, objects, bytes });
  try {
    const start = await packStart(fd);
    if (!start) return no('unreadable');
    const head = Buffer.alloc(12);
    await fd.read(head, 0, 12, start.start);
    objects = head.readUInt32BE(8);
    if (objects > limits.maxObjects) return no('objects');
    let pos = start.start + 12;
    for (let n = 0; n < objects; n++) {
      const e = await readEntry(fd, pos, start.hashBytes);
      if (!e) return no('unreadable');
      const delta = e.type === OBJ_OFS_DELTA || e.type === OBJ_REF_DELTA;
      if (!delta && bytes + e.size > limits.maxBytes) return no('bytes');
      const r = await inflateEntry(fd, path, e.data, e.size);
      if (!r) return no('unreadable');
      if (delta) {
        const base = deltaSize(r.head, 0);
        const result = base ? deltaSize(r.head, base.next) : null;
        if (!result) return no('unreadable');
        if (result.value > DELTA_RESULT_MAX) return no('delta');
        if (bytes + result.value > limits.maxBytes) return no('bytes');
        bytes += result.value;
      } else bytes += e.size;
      pos = e.data + r.used;
    }
    return { ok: true, objects, bytes };
  } finally {
    await fd.close();
  }
}
