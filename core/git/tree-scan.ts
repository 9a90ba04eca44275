import { spawn } from 'node:child_process';
import { HOME_LIMIT_KEYS, type HomeLimits, MAX_NAME_BYTES } from '../ports/host-git.js';
import { hostGitArgv, type ListedEntry, oneLine } from './host-git.js';

/**
 * What a tree would put in a worktree, read from object metadata only
 * (`git ls-tree -r -l -z`: each entry's mode, size and path), never by
 * checking it out. The listing is read as it streams and git is stopped at
 * the first cap passed, so a tree of a million shared blobs or a path
 * thousands of directories deep costs no more than the caps allow.
 */

const MIB = 1024 * 1024;
/** The bytes of an ls-tree record before its path: `<mode> <type> <oid> <size>\t`, sha256 included. */
const RECORD_HEAD_BYTES = 128;
/** How much of a path a refusal shows. */
const SHOWN_PATH = 48;

export interface TreeScan {
  files: number;
  bytes: number;
  longestPath: number;
  /** The entries of the paths asked for (`want`) that the tree has as files, by path. */
  found: Map<string, ListedEntry>;
}

/** A path for a one-line refusal: its start, controls replaced, cut at SHOWN_PATH characters. */
function shortPath(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point
  const clean = path.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return clean.length > SHOWN_PATH ? `${clean.slice(0, SHOWN_PATH)}...` : clean;
}

const capLine = (what: string, key: keyof HomeLimits, max: number) =>
  `the sandbox's tree ${what}: ${HOME_LIMIT_KEYS[key]} caps it at ${max}`;

/** The refusal for one entry, or null while the running totals stay under the caps. */
function judgeEntry(scan: TreeScan, limits: HomeLimits, path: Buffer, size: number): string | null {
  scan.files += 1;
  scan.bytes += size;
  scan.longestPath = Math.max(scan.longestPath, path.length);
  if (path.length > limits.maxPathBytes) {
    return capLine(
      `has a path of ${path.length} bytes (${shortPath(path.toString('utf8'))})`,
      'maxPathBytes',
      limits.maxPathBytes,
    );
  }
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && path[i] !== 0x2f) continue;
    if (i - start > MAX_NAME_BYTES) {
      return `the sandbox's tree has a name of ${i - start} bytes (${shortPath(path.subarray(start, i).toString('utf8'))}), longer than any file system here holds (${MAX_NAME_BYTES})`;
    }
    start = i + 1;
  }
  if (scan.files > limits.maxFiles)
    return capLine(`has more than ${limits.maxFiles} files`, 'maxFiles', limits.maxFiles);
  if (scan.bytes > limits.maxMiB * MIB) return capLine(`holds more than ${limits.maxMiB} MiB`, 'maxMiB', limits.maxMiB);
  return null;
}

/** Parses one `ls-tree -l -z` record: its entry, its size (0 for a submodule entry) and its path. */
function parseRecord(rec: Buffer): { entry: ListedEntry; size: number; path: Buffer } | null {
  const tab = rec.indexOf(0x09);
  if (tab < 0) return null;
  const m = /^(\d{6}) (\w+) ([0-9a-f]+) +(-|\d+)$/.exec(rec.subarray(0, tab).toString('latin1'));
  if (!m) return null;
  const [, mode = '', type = '', oid = '', size = ''] = m;
  return { entry: { mode, type, oid }, size: size === '-' ? 0 : Number(size), path: rec.subarray(tab + 1) };
}

/**
 * Scans the tree of `rev` in `cwd` against `limits`: the one-line refusal (naming the cap and
 * its key), or null with the totals when the tree is within every cap, and the entries of the
 * `want` paths the tree has as files (read from the same listing: no other git call).
 */
export function scanTree(
  cwd: string,
  rev: string,
  limits: HomeLimits,
  want: readonly string[] = [],
): Promise<{ refusal: string } | { refusal: null; scan: TreeScan }> {
  const wanted = new Map(want.map((p) => [Buffer.from(p).toString('latin1'), p]));
  return new Promise((resolve) => {
    const child = spawn('git', hostGitArgv(['ls-tree', '-r', '-l', '-z', rev]), {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const scan: TreeScan = { files: 0, bytes: 0, longestPath: 0, found: new Map() };
    let refusal: string | null = null;
    let pending = Buffer.alloc(0);
    let stderr = '';
    const stop = (why: string) => {
      refusal ??= why;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (refusal) return;
      let buf = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      for (let nul = buf.indexOf(0); nul >= 0 && !refusal; nul = buf.indexOf(0)) {
        const rec = parseRecord(buf.subarray(0, nul));
        buf = buf.subarray(nul + 1);
        if (!rec) stop("the sandbox's tree could not be listed");
        else {
          const why = judgeEntry(scan, limits, rec.path, rec.size);
          if (why) stop(why);
          const path = wanted.size > 0 ? wanted.get(rec.path.toString('latin1')) : undefined;
          if (path !== undefined) scan.found.set(path, rec.entry);
        }
      }
      pending = Buffer.from(buf);
      // A record this long already holds a path over the cap, however it ends.
      if (!refusal && pending.length > limits.maxPathBytes + RECORD_HEAD_BYTES) {
        const tab = pending.indexOf(0x09);
        const path = tab < 0 ? pending : pending.subarray(tab + 1);
        stop(
          capLine(
            `has a path of more than ${limits.maxPathBytes} bytes (${shortPath(path.toString('utf8'))})`,
            'maxPathBytes',
            limits.maxPathBytes,
          ),
        );
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < 4096) stderr += d;
    });
    child.on('error', (err) => stop(`the sandbox's tree could not be listed: ${oneLine(err.message)}`));
    child.on('close', (code) => {
      if (refusal) resolve({ refusal });
      else if (code !== 0) {
        const why = oneLine(stderr);
        resolve({ refusal: `the sandbox's tree could not be listed${why ? `: ${why}` : ` (exit ${code})`}` });
      } else resolve({ refusal: null, scan });
    });
  });
}
