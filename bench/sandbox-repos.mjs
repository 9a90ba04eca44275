// Repositories for bench/sandbox.mjs: a small one (200 files, one commit, as the
// bench always used) and one with real history, generated with `git fast-import`
// in seconds rather than by thousands of `git commit` processes. Both have the
// ticket branch chalk/<TICKET> checked out, a spec at specs/<TICKET>.md and a
// git identity, as a user's worktree would.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const sh = (cwd, ...args) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 }).trim();

function initRepo(root) {
  mkdirSync(root, { recursive: true });
  sh(root, 'init', '-q', '-b', 'main');
  sh(root, 'config', 'user.name', 'Bench Person');
  sh(root, 'config', 'user.email', 'bench@example.com');
}

const specText = (ticket) => `# ${ticket}: bench ticket\n\n- [ ] the first checkpoint\n- [ ] the second checkpoint\n`;

/** The 200-file repository the bench has always used: one commit on main, the ticket branch on it. */
export function makeSmallRepo(root, ticket) {
  initRepo(root);
  for (let i = 0; i < 200; i++) writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`.repeat(50));
  mkdirSync(join(root, 'specs'));
  writeFileSync(join(root, 'specs', `${ticket}.md`), specText(ticket));
  sh(root, 'add', '-A');
  sh(root, 'commit', '-q', '-m', 'initial');
  sh(root, 'checkout', '-q', '-b', `chalk/${ticket}`);
  return { root, files: Array.from({ length: 200 }, (_, i) => `f${i}.txt`) };
}

/** mulberry32: a small seeded generator, so every run builds the same history. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'const let return if else for while function import export from await async class new this value ' +
  'result error index count items config options state data node path file line text map set get push ' +
  'length string number true false null undefined throw catch try switch case default break continue'
).split(' ');

/** A line that looks like source code (and compresses about as well). */
function codeLine(r) {
  const n = 3 + Math.floor(r() * 9);
  let s = '  '.repeat(Math.floor(r() * 4));
  for (let i = 0; i < n; i++) {
    const w = WORDS[Math.floor(r() * WORDS.length)];
    s += i ? ' ' : '';
    s += r() < 0.35 ? `${w}${Math.floor(r() * 2 ** 30).toString(36)}` : w;
  }
  return r() < 0.5 ? `${s};` : s;
}

const lines = (r, n) => Array.from({ length: n }, () => codeLine(r));

/** Bytes of a text file: mostly a few KB, some tens of KB, a few over 50 KB. */
function textSize(r) {
  const x = r();
  if (x < 0.2) return 1024 + r() * 3072;
  if (x < 0.7) return 4096 + r() * 12288;
  if (x < 0.95) return 16384 + r() * 32768;
  return 49152 + r() * 81920;
}

const EXT = ['ts', 'ts', 'ts', 'js', 'md', 'json', 'css', 'py'];

/**
 * A repository with `commits` commits on main touching about `files` files:
 * two thirds exist from the first commit, the rest are added along the way;
 * every commit rewrites a few hunks of one to three text files, every 50th replaces a
 * binary asset (one file in twenty is one, 50 to 300 KB of noise). The ticket
 * branch adds the spec in two commits of its own. The store is repacked, as a
 * user's would be. Returns the root, the text files' paths and sizes.
 */
export async function makeHistoryRepo(root, o) {
  const { ticket, commits, files, seed = 9 } = o;
  initRepo(root);
  const r = rng(seed);
  /** path -> lines (text) or null (an asset) */
  const tree = new Map();
  const textPaths = [];
  let made = 0;
  const newPath = () => {
    const i = made++;
    const asset = i % 20 === 19;
    const dir = `src/mod${String(i % 60).padStart(2, '0')}/${i % 7 === 0 ? 'lib/' : ''}`;
    const path = asset ? `assets/img${i}.bin` : `${dir}file${i}.${EXT[i % EXT.length]}`;
    if (!asset) textPaths.push(path);
    return path;
  };
  // Sizes come from the seed; the bytes are noise (as incompressible as any, and a JS loop per byte would be slow).
  const asset = () => randomBytes(51200 + Math.floor(r() * 256000));

  // Quick and loose (no deltas, light compression): the repack below does it properly.
  const proc = spawn('git', ['-c', 'pack.compression=1', 'fast-import', '--quiet', '--done', '--depth=0'], {
    cwd: root,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = once(proc, 'close');
  const write = async (chunk) => {
    if (!proc.stdin.write(chunk)) await once(proc.stdin, 'drain');
  };
  const modify = async (path, data) => {
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    await write(`M 100644 inline ${path}\ndata ${body.length}\n`);
    await write(body);
    await write('\n');
  };
  const text = (path) => `${tree.get(path).join('\n')}\n`;
  let when = 1_600_000_000;
  const commit = async (ref, message, change) => {
    when += 600 + Math.floor(r() * 7200);
    const who = `Bench Person <bench@example.com> ${when} +0000`;
    await write(`commit ${ref}\nauthor ${who}\ncommitter ${who}\ndata ${Buffer.byteLength(message)}\n${message}\n`);
    await change();
    await write('\n');
  };

  const initial = Math.round((files * 2) / 3);
  const addEvery = Math.max(1, Math.floor(commits / Math.max(1, files - initial)));
  await commit('refs/heads/main', 'initial import', async () => {
    for (let i = 0; i < initial; i++) {
      const path = newPath();
      if (path.startsWith('assets/')) {
        tree.set(path, null);
        await modify(path, asset());
      } else {
        tree.set(path, lines(r, Math.round(textSize(r) / 52)));
        await modify(path, text(path));
      }
    }
  });
  for (let c = 1; c < commits; c++) {
    await commit('refs/heads/main', `change ${c}: ${codeLine(r).trim().slice(0, 60)}`, async () => {
      if (made < files && c % addEvery === 0) {
        const path = newPath();
        if (path.startsWith('assets/')) {
          tree.set(path, null);
          await modify(path, asset());
        } else {
          tree.set(path, lines(r, Math.round(textSize(r) / 52)));
          await modify(path, text(path));
        }
      }
      const touched = new Set();
      const n = 1 + Math.floor(r() * 3);
      for (let k = 0; k < n; k++) touched.add(textPaths[Math.floor(r() * textPaths.length)]);
      for (const path of touched) {
        const ls = tree.get(path);
        const hunks = 1 + Math.floor(r() * 3);
        for (let h = 0; h < hunks; h++) {
          const at = Math.floor(r() * ls.length);
          ls.splice(at, Math.floor(r() * 12), ...lines(r, 2 + Math.floor(r() * 24)));
        }
        await modify(path, text(path));
      }
      if (c % 50 === 0) {
        const assets = [...tree.keys()].filter((p) => p.startsWith('assets/'));
        if (assets.length) await modify(assets[Math.floor(r() * assets.length)], asset());
      }
    });
  }
  // The ticket branch: its spec, then a first change of its own.
  await write(`reset refs/heads/chalk/${ticket}\nfrom refs/heads/main\n\n`);
  await commit(`refs/heads/chalk/${ticket}`, `${ticket}: spec`, () => modify(`specs/${ticket}.md`, specText(ticket)));
  const first = textPaths[0];
  tree.get(first).push('// the ticket starts here');
  await commit(`refs/heads/chalk/${ticket}`, `${ticket}: first step`, () => modify(first, text(first)));
  await write('done\n');
  proc.stdin.end();
  const [code] = await exited;
  if (code !== 0) throw new Error(`git fast-import failed (exit ${code}): ${stderr.trim().split('\n')[0]}`);
  sh(root, 'repack', '-a', '-d', '-f', '-q', '--window=10', '--depth=50');
  sh(root, 'checkout', '-q', '-f', `chalk/${ticket}`);
  const sizes = Object.fromEntries(
    sh(root, 'count-objects', '-v')
      .split('\n')
      .map((l) => l.split(': '))
      .map(([k, v]) => [k, Number(v)]),
  );
  return {
    root,
    files: textPaths,
    fileCount: tree.size + 1,
    commitCount: Number(sh(root, 'rev-list', '--count', 'HEAD')),
    packMb: sizes['size-pack'] / 1024,
  };
}
