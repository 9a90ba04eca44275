import { randomBytes } from 'node:crypto';
import { constants, createWriteStream, type Stats } from 'node:fs';
import { copyFile, link, lstat, mkdir, mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  BundleImportError,
  type BundleRejection,
  DEFAULT_HOME_LIMITS,
  HOME_LIMIT_KEYS,
  type HomeLimits,
  type ImportBundleOptions,
  type ImportedBundle,
} from '../ports/host-git.js';
import { BUNDLE_MAX_BYTES } from '../ports/sandbox.js';
import { readShallow } from './bundle-create.js';
import {
  checkFastForward,
  type FastForwardPlan,
  fastForward,
  readWorktree,
  type TreeChanges,
  treeChanges,
} from './fast-forward.js';
import {
  currentBranchName,
  fileOfEntry,
  hostGit,
  hostGitOk,
  isAncestor,
  oneLine,
  refExists,
  resolveCommit,
  revParse,
} from './host-git.js';
import { bundleHeadsOf, DELTA_RESULT_MAX, scanBundlePack } from './pack-scan.js';
import { scanTree } from './tree-scan.js';

export {
  BundleImportError,
  type BundleRejection,
  type BundleTarget,
  type ImportBundleOptions,
  type ImportedBundle,
} from '../ports/host-git.js';

const refuse = (reason: BundleRejection, message: string) => new BundleImportError(reason, message);
const short = (sha: string) => sha.slice(0, 12);
const HEX_OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** A head name we pass on in a refspec: HEAD or a plain ref, no refspec syntax. */
const HEAD_NAME = /^(?:HEAD|refs\/[A-Za-z0-9._/-]+)$/;

function kindOf(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isSymbolicLink()) return 'a symlink';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

const MIB = 1024 * 1024;
const size = (n: number) => (n >= MIB ? `${(n / MIB).toFixed(1).replace(/\.0$/, '')} MiB` : `${n} bytes`);
const cap = (n: number) => (n >= MIB ? `${(n / MIB).toFixed(1).replace(/\.0$/, '')} MiB` : `${n}-byte`);

/**
 * Copies the bundle into `dir` after checking it is a regular file under the
 * cap. The copy is read through a descriptor opened without following a
 * symlink (and without blocking on a FIFO) and checked again there, so what
 * git reads afterwards is what was checked, whatever the sandbox swaps in.
 */
async function privateCopy(path: string, dir: string, maxBytes: number): Promise<string> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch {
    throw refuse('missing', "the sandbox's bundle is missing");
  }
  const kind = kindOf(st);
  if (kind) throw refuse('not-a-file', `the sandbox's bundle is ${kind}`);
  if (st.size > maxBytes) {
    throw refuse('too-large', `the sandbox's bundle is ${size(st.size)}, over the ${cap(maxBytes)} cap`);
  }
  let fd: Awaited<ReturnType<typeof open>>;
  try {
    fd = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse('not-a-file', `the sandbox's bundle ${code === 'ELOOP' ? 'is a symlink' : 'cannot be opened'}`);
  }
  try {
    const again = await fd.stat();
    if (!again.isFile() || again.ino !== st.ino || again.dev !== st.dev) {
      throw refuse('not-a-file', `the sandbox's bundle changed while it was checked`);
    }
    const copy = join(dir, 'in.bundle');
    const out = createWriteStream(copy, { flags: 'wx', mode: 0o600 });
    // Reads at most one byte more than the cap: a file that grew is caught below.
    await pipeline(fd.createReadStream({ start: 0, end: maxBytes, autoClose: false }), out);
    if (out.bytesWritten > maxBytes) {
      throw refuse('too-large', `the sandbox's bundle grew over the ${cap(maxBytes)} cap`);
    }
    return copy;
  } finally {
    await fd.close();
  }
}

const FETCH = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-auto-gc'];

type TipFile = { mode: string; text: string } | null;

/** `ready` rejected: its error is the import's, as it is. */
class NotReady extends Error {
  constructor(override readonly cause: unknown) {
    super('the bundle was not made');
  }
}

/** How the head's object is named when it is not a commit. */
const KIND_NAMES: Readonly<Record<string, string>> = { tag: 'an annotated tag', tree: 'a tree', blob: 'a blob' };

/** What the host repository is, read once while the bundle is copied and scanned (nothing of it depends on the bundle). */
interface HostFacts {
  /** The absolute object directory the quarantine borrows from, and where its objects move. */
  objects: string;
}

/**
 * A throwaway bare repository that borrows the worktree's objects (alternates) and its shallow
 * boundary; made while the bundle is copied and scanned.
 */
async function makeQuarantine(cwd: string, dir: string): Promise<{ q: string; facts: HostFacts }> {
  const q = join(dir, 'quarantine.git');
  const [paths] = await Promise.all([
    hostGitOk(
      [
        'rev-parse',
        '--path-format=absolute',
        '--git-path',
        'objects',
        '--git-path',
        'shallow',
        '--is-shallow-repository',
      ],
      { cwd },
    ),
    hostGitOk(['init', '--quiet', '--bare', '--template=', q], { cwd: dir }),
  ]);
  const [objects = '', shallowFile = '', shallow = ''] = paths.split('\n');
  if (!isAbsolute(objects) || !isAbsolute(shallowFile)) throw new Error(`git named no object directory for ${cwd}`);
  await mkdir(join(q, 'objects', 'info'), { recursive: true });
  await writeFile(join(q, 'objects', 'info', 'alternates'), `${objects}\n`);
  // A shallow repository's boundary holds here too: its commits' missing parents are not looked for.
  const ids = shallow === 'true' ? readShallow(shallowFile) : [];
  if (ids.length > 0) await writeFile(join(q, 'shallow'), `${ids.join('\n')}\n`, { mode: 0o600, flag: 'wx' });
  return { q, facts: { objects } };
}

/**
 * Fetches the bundle's head into the quarantine (git verifies the bundle as it reads it: its
 * prerequisites must be there, every object is checked) and checks there that the head is a
 * commit (nothing is peeled: a tag, a tree or a blob is refused), that it descends from `base`,
 * and that its tree is within the caps (what it would check out, read from object metadata).
 * Nothing is written to the user's repository: a bundle of someone else's history leaves none
 * of its objects in the user's store.
 */
async function checkInQuarantine(o: {
  cwd: string;
  q: string;
  copy: string;
  head: { sha: string; name: string };
  base: string;
  limits: HomeLimits;
  /** Whether to read what the tip changes (for a fast-forward's checks) while the quarantine has it. */
  changes: boolean;
  /** Files of the tip to read while the quarantine has it (ImportBundleOptions.read). */
  read: readonly string[];
}): Promise<{ changes: TreeChanges | null; files: TipFile[] }> {
  const { q } = o;
  const probe = 'refs/chalk/quarantine';
  const f = await hostGit(['-c', 'fetch.fsckObjects=true', ...FETCH, o.copy, `${o.head.name}:${probe}`], { cwd: q });
  if (f.code !== 0) {
    // Why, in git's words: `bundle verify` names what is missing.
    const verify = await hostGit(['bundle', 'verify', '--quiet', o.copy], { cwd: o.cwd });
    if (verify.code !== 0) {
      const why = oneLine(verify.stderr.replaceAll(o.copy, 'bundle')).replace(/^error: /, '');
      throw refuse('unverified', `the sandbox's bundle does not verify${why ? `: ${why}` : ''}`);
    }
    throw refuse('unverified', `the sandbox's bundle could not be read: ${oneLine(f.stderr)}`);
  }
  // The ref's object and its type, as stored (nothing is peeled), read beside the checks of the
  // tip, which fail on anything but a commit and are looked at only once it is one.
  // The files `read` names come from the scan's listing: one cat-file for each blob among them.
  const scanned = scanTree(q, o.head.sha, o.limits, o.read);
  const checks = Promise.all([
    isAncestor(q, { ancestor: o.base, descendant: o.head.sha }),
    scanned,
    o.changes ? treeChanges(q, o.base, o.head.sha).catch(() => null) : null,
    scanned.then((scan) =>
      scan.refusal === null
        ? Promise.all(
            o.read.map((p) => {
              const entry = scan.scan.found.get(p);
              return entry ? fileOfEntry(q, entry) : null;
            }),
          )
        : [],
    ),
  ]);
  checks.catch(() => undefined);
  const [got = '', kind = ''] = (
    await hostGitOk(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { cwd: q, input: `${probe}\n` })
  ).split(' ');
  if (got !== o.head.sha) throw refuse('unverified', `the sandbox's bundle's head does not match its header`);
  if (kind !== 'commit') {
    throw refuse(
      'not-a-commit',
      `the sandbox's bundle's head ${short(got)} is ${KIND_NAMES[kind] ?? kind}, not a commit`,
    );
  }
  const [descends, scan, changes, files] = await checks;
  if (!descends) {
    throw refuse('not-descendant', `the sandbox's bundle's tip ${short(got)} does not descend from ${short(o.base)}`);
  }
  if (scan.refusal !== null) throw refuse('over-cap', scan.refusal);
  if (o.changes && changes === null) throw refuse('git', `could not compare the sandbox's tip with ${short(o.base)}`);
  return { changes, files };
}

/**
 * Moves what the quarantine fetched into the user's object store, as git moves a push's
 * quarantine (tmp_objdir_migrate): each pack's data before its index, so no reader finds an
 * index without its pack; a file already there (the same content, by its name) is left.
 */
async function migrateObjects(q: string, objects: string): Promise<void> {
  const from = join(q, 'objects');
  const entries = await readdir(from, { withFileTypes: true });
  for (const e of entries) {
    if (!e.isDirectory() || e.name === 'info') continue;
    const files = await readdir(join(from, e.name));
    // pack-X.pack (and .rev, .keep ...) first, pack-X.idx last.
    files.sort((a, b) => Number(a.endsWith('.idx')) - Number(b.endsWith('.idx')));
    await mkdir(join(objects, e.name), { recursive: true });
    for (const name of files) await moveInto(join(from, e.name, name), join(objects, e.name, name));
  }
}

/** Renames `src` to `dest` (copied first when they are on different file systems); an existing `dest` stays. */
async function moveInto(src: string, dest: string): Promise<void> {
  try {
    await link(src, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
    const part = `${dest}.chalk-${randomBytes(6).toString('hex')}`;
    await copyFile(src, part, constants.COPYFILE_EXCL);
    try {
      await link(part, dest).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
    } finally {
      await rm(part, { force: true });
    }
  }
}

/** The pack against the caps, read before git inflates any of it (pack-scan.ts). */
async function checkPack(copy: string, limits: HomeLimits): Promise<void> {
  const v = await scanBundlePack(copy, { maxObjects: limits.maxObjects, maxBytes: limits.maxMiB * MIB });
  if (v.ok) return;
  if (v.why === 'unreadable')
    throw refuse('unverified', `the sandbox's bundle does not verify: its pack cannot be read`);
  if (v.why === 'objects') {
    throw refuse(
      'over-cap',
      `the sandbox's bundle holds ${v.objects} objects: ${HOME_LIMIT_KEYS.maxObjects} caps it at ${limits.maxObjects}`,
    );
  }
  if (v.why === 'delta') {
    throw refuse(
      'over-cap',
      `the sandbox's bundle has a delta building more than ${size(DELTA_RESULT_MAX)}, which git never writes`,
    );
  }
  throw refuse(
    'over-cap',
    `the sandbox's bundle inflates to more than ${limits.maxMiB} MiB: ${HOME_LIMIT_KEYS.maxMiB} caps it at ${limits.maxMiB}`,
  );
}

/**
 * The host's only way to take commits from a sandbox. The bundle must be a
 * regular file under the cap, have exactly one head under the expected name,
 * declare no more objects than the cap, and be read by git (which verifies it:
 * its prerequisites must be in the user's repository) into a quarantine
 * repository, where its head must be a commit that descends from `base` with a
 * tree within the caps (HomeLimits) before anything reaches the user's store;
 * then the quarantine's objects move into the user's store (no ref names them
 * yet), the caller's `inspect` judges the tip, and it either fast-forwards the
 * checked-out branch (still at `base`; fast-forward.ts) or becomes a new
 * `detention/...` branch (create-only `update-ref`). Any failure is a
 * BundleImportError with one line, and the refs, the index and the worktree
 * are as they were. What does not depend on the bundle is read while it is
 * copied and scanned.
 */
export async function importBundle(o: ImportBundleOptions): Promise<ImportedBundle> {
  const settle = <T>(p: Promise<T>) => {
    p.catch(() => undefined);
    return p;
  };
  // The bundle is complete once the caller says so (handled from here on, awaited below).
  const ready = o.ready
    ? settle(
        o.ready.then(
          () => undefined,
          (err: unknown) => Promise.reject(new NotReady(err)),
        ),
      )
    : null;
  const maxBytes = o.maxBytes ?? BUNDLE_MAX_BYTES;
  const cwd = o.cwd;
  const dir = await mkdtemp(join(tmpdir(), 'chalk-bundle-'));
  // Everything about the host that does not depend on the bundle is read at once, while the
  // bundle is copied and scanned: the target's name, the base, the worktree (a fast-forward's
  // filter drivers and the person's changes), the checked-out branch, the quarantine.
  const ref = settle(targetRef(o));
  const state = settle(hostState(cwd, o.base));
  const base = settle(state.then((h) => h.base));
  const worktree = o.target.kind === 'fast-forward' ? settle(readWorktree(cwd)) : null;
  const quarantine = settle(makeQuarantine(cwd, dir));
  try {
    // What does not need the bundle is under way; the bundle itself waits for the caller.
    await ready;
    const target = await ref;
    const from = await base;
    if (!from) throw refuse('bad-target', `the sandbox's base ${oneLine(o.base)} is not a commit in ${cwd}`);
    const targetState = settle(checkTarget(o, target, from, await state));
    const copy = await privateCopy(o.bundle, dir, maxBytes);
    const limits = o.limits ?? DEFAULT_HOME_LIMITS;
    const listed = settle(bundleHeadsOf(copy).catch(() => null));
    await checkPack(copy, limits);
    const heads = await listed;
    if (!heads) throw refuse('unverified', `the sandbox's bundle lists no heads`);
    const head = heads[0];
    if (heads.length !== 1 || !head) {
      throw refuse('heads', `the sandbox's bundle has ${heads.length} heads (expected exactly one)`);
    }
    if (!HEX_OID.test(head.sha) || !HEAD_NAME.test(head.name) || head.name.includes('..')) {
      throw refuse('heads', `the sandbox's bundle names its head oddly: '${oneLine(head.name).slice(0, 80)}'`);
    }
    const expected = o.head ?? 'HEAD';
    if (head.name !== expected) {
      throw refuse('heads', `the sandbox's bundle's head is ${head.name}, not ${expected}`);
    }
    const { q, facts } = await quarantine;
    const { changes, files } = await checkInQuarantine({
      cwd,
      q,
      copy,
      head,
      base: from,
      limits,
      changes: worktree !== null,
      read: o.read ?? [],
    });
    await targetState;
    const plan = worktree?.then((w) =>
      checkFastForward(cwd, { base: from, tip: head.sha, worktree: w, ch: changes as TreeChanges }),
    );
    // Awaited after the move; a refusal meanwhile is not an unhandled one.
    plan?.catch(() => undefined);
    await migrateObjects(q, facts.objects);
    const changed = changes ? [...changes.added, ...changes.present] : null;
    return await move({ cwd, tip: head.sha, ref: target, inspect: o.inspect, plan, changed, files });
  } catch (err) {
    if (err instanceof BundleImportError) throw err;
    if (err instanceof NotReady) throw err.cause;
    throw refuse(
      'git',
      `could not take the sandbox's bundle: ${oneLine(err instanceof Error ? err.message : String(err))}`,
    );
  } finally {
    await quarantine.catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

async function targetRef(o: ImportBundleOptions): Promise<string> {
  const name = o.target.kind === 'fast-forward' ? o.target.branch : o.target.name;
  if (o.target.kind === 'branch' && !name.startsWith('detention/')) {
    throw refuse('bad-target', `a bundle becomes a detention/... branch, not '${oneLine(name)}'`);
  }
  const ok = await hostGit(['check-ref-format', `refs/heads/${name}`], { cwd: o.cwd });
  if (ok.code !== 0 || name.startsWith('-')) throw refuse('bad-target', `'${oneLine(name)}' is not a branch name`);
  return `refs/heads/${name}`;
}

/** The target as the caller said: the branch checked out at `base`, or a branch that does not exist yet. */
/** The base as a commit (null: it names none), HEAD and the checked-out branch (null: detached). */
interface HostState {
  base: string | null;
  head: string | null;
  branch: string | null;
}

/** The base, HEAD and the branch in one git call; one by one when that fails, so each gets its own line. */
async function hostState(cwd: string, base: string): Promise<HostState> {
  if (!HEX_OID.test(base)) return { base: null, head: null, branch: null };
  const r = await hostGit(['rev-parse', `${base}^{commit}`, 'HEAD', '--symbolic-full-name', 'HEAD'], { cwd });
  const [commit = '', head = '', name = ''] = r.stdout.split('\n');
  if (r.code === 0 && HEX_OID.test(commit) && HEX_OID.test(head)) {
    return { base: commit, head, branch: name.startsWith('refs/heads/') ? name.slice('refs/heads/'.length) : null };
  }
  const [b, h, branch] = await Promise.all([
    resolveCommit(cwd, base),
    revParse(cwd, 'HEAD').catch(() => null),
    currentBranchName(cwd),
  ]);
  return { base: b, head: h, branch };
}

/** The target as the caller said: the branch checked out at `base`, or a branch that does not exist yet. */
async function checkTarget(o: ImportBundleOptions, ref: string, base: string, state: HostState): Promise<void> {
  if (o.target.kind === 'branch') {
    if (await refExists(o.cwd, ref)) throw refuse('bad-target', `branch ${o.target.name} already exists`);
    return;
  }
  const { branch, head } = state;
  if (branch !== o.target.branch) {
    throw refuse('head-moved', `${o.cwd} has ${branch ?? 'a detached HEAD'} checked out, not ${o.target.branch}`);
  }
  if (head !== base) {
    throw refuse(
      'head-moved',
      `${o.target.branch} moved to ${short(head ?? 'nothing')} while the sandbox worked from ${short(base)}`,
    );
  }
}

/**
 * With the tip's objects in the user's store (checked in the quarantine, reachable from no ref
 * yet): the caller's judgement, then the move, the fast-forward or a new detention branch.
 */
async function move(o: {
  cwd: string;
  tip: string;
  ref: string;
  inspect?: ImportBundleOptions['inspect'];
  /** A fast-forward's checks of the worktree, under way, and the paths the tip changes. */
  plan?: Promise<FastForwardPlan>;
  changed: readonly string[] | null;
  files: TipFile[];
}): Promise<ImportedBundle> {
  const { plan, tip } = o;
  // The caller's judgement and the worktree's checks read the same tip side by side.
  const refusal = (await o.inspect?.(tip, o.changed, o.files)) ?? null;
  if (refusal !== null) throw refuse('inspected', refusal);
  if (plan === undefined) {
    const zero = '0'.repeat(tip.length);
    await hostGitOk(['update-ref', '-m', 'chalk: detention', o.ref, tip, zero], { cwd: o.cwd });
  } else {
    await fastForward(o.cwd, o.ref, await plan);
  }
  return { tip, ref: o.ref };
}
