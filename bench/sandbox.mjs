#!/usr/bin/env node
// What the sandbox boundary costs, before against after, in one run.
//
// BEFORE (the design up to 9b2272d, done by hand with the docker CLI and git):
// the user's git dir bind-mounted read-only at /src.git and the run's io dir
// read-write at /chalk; `git clone --shared`; the export bundle written to
// /chalk/out.bundle and fetched by host git, then `merge --ff-only`.
// AFTER (the harness, from dist/): nothing of the host mounted; core/run/base/session.ts
// startSandbox: host git reads HEAD and the fork point while the engine lists the sandbox
// mirrors and the sandbox's network is made (Sandbox.prepare); the repository's mirror (its
// history up to the fork point, an image layer on the sandbox image) is used, or made first
// (the first start on a repository, timed alone); DockerSandbox.open starts the hardened
// container (read-only root, memory, CPU and pids limits) from the mirror's image while host
// git makes the thin bundle (the ticket's commits beyond the mirror); clone streams it in over
// an exec's stdin beside putFile's system prompt. AFTER, WHOLE: the same without mirrors (the
// whole history streamed, the design before them).
// Per loop commitAll, then core/run/base/home.ts bringHome (export, read back
// through read-file.sh, bundle verify, one head, ancestry in a quarantine
// repository, temporary ref, the guard's host-git diff on the tip,
// fast-forward), the tree id, and reapStrays.
// AFTER BY HAND: the same steps as AFTER with the docker CLI and host git and
// the shipped scripts (over the mirror's image the harness made, the thin bundle, no network
// of its own), which tells the design's cost from the harness's own.
//
// Measured on a small repository (200 files, one commit) and on one with real
// history (generated with git fast-import). Runs alternate (their order
// rotates) so machine load hits every variant alike; medians are printed.
// The harness's start includes the sandbox's own network and its way out through the egress
// container (plugins/sandbox-docker/egress), which the by-hand variants, on the default bridge,
// do without. Last, when the engine has runsc registered, the harness under gVisor against runc.
// DEPTH: the harness's start on the history repository with CHALK_CLONE_DEPTH (the ticket's
// commits and --depth of the base's travel, from a shallow copy; no mirror), alternated with the
// default start (over the mirror).
// Needs the Docker engine, the docker CLI and the sandbox image; after `npm run build`:
//   node bench/sandbox.mjs [--starts 7] [--loops 25] [--commits 3000] [--files 1500] [--depth 50] [--only depth|start]
// (about 3 minutes on a 2-core machine with the defaults; --only depth measures DEPTH alone, --only start
// the starts alone). The target (issue 23): AFTER's start + clone on the history repository at most
// START_TARGET times BEFORE's; the verdict line says whether this run met it.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { makeHistoryRepo, makeSmallRepo } from './sandbox-repos.mjs';

// ---- settings ---------------------------------------------------------------
const counts = (() => {
  const positive = { starts: 7, loops: 25, commits: 3000, files: 1500, depth: 50 };
  let values;
  try {
    ({ values } = parseArgs({
      options: Object.fromEntries([...Object.keys(positive), 'only'].map((k) => [k, { type: 'string' }])),
    }));
    if (values.only !== undefined && values.only !== 'depth' && values.only !== 'start')
      throw new Error(`--only takes 'depth' or 'start' (got '${values.only}')`);
    positive.only = values.only ?? null;
    delete values.only;
  } catch (err) {
    console.error(
      `bench/sandbox.mjs: ${err.message}; options: --starts N --loops N --commits N --files N --depth N --only depth|start`,
    );
    process.exit(2);
  }
  for (const [k, v] of Object.entries(values)) {
    if (!/^[1-9][0-9]*$/.test(v)) {
      console.error(`bench/sandbox.mjs: --${k} must be a positive whole number (got '${v}')`);
      process.exit(2);
    }
    positive[k] = Number(v);
  }
  return positive;
})();

const dist = join(import.meta.dirname, '..', 'dist');
const scriptsDir = join(import.meta.dirname, '..', 'share', 'sandbox', 'scripts');
if (!existsSync(join(dist, 'core', 'run', 'base', 'home.js'))) {
  console.error('bench/sandbox.mjs: dist/ has no core/run/base/home.js; run npm run build first');
  process.exit(2);
}
const { DockerSandbox } = await import(join(dist, 'plugins/sandbox-docker/sandbox.js'));
const { autoCpus, PIDS_LIMIT, sandboxUser } = await import(join(dist, 'plugins/sandbox-docker/container-config.js'));
const { BUNDLE_MAX_BYTES } = await import(join(dist, 'core/ports/sandbox.js'));
const { hostGitArgv } = await import(join(dist, 'core/git/host-git.js'));
const { mirrorTag } = await import(join(dist, 'plugins/sandbox-docker/mirror.js'));
const { bringHome } = await import(join(dist, 'core/run/base/home.js'));
const portFile = join(dist, 'core/git/port.js');
const gitPort = existsSync(portFile) ? (await import(portFile)).hostGitPort : null;
/** core/run/base/home.ts bringHome; since the HostGit port it takes the port second (the kernel binds core/git's). */
const homecoming = (ctx, session, o) =>
  bringHome.length >= 4 ? bringHome(ctx, gitPort, session, o) : bringHome(ctx, session, o);
const { SYSTEM_PROMPT, startSandbox } = await import(join(dist, 'core/run/base/session.js'));
const { writeHostFile } = await import(join(dist, 'core/fs/host-file.js'));

const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';
/** Issue 23's target: AFTER's start + clone on the history repository, against BEFORE's. */
const START_TARGET = 1.5;
/** The CHALK_TMPFS_SIZE and CHALK_SANDBOX_MEM_MB defaults. */
const TMPFS = '4g';
const MEMORY_MB = 2048;
const TICKET = 'BEN-1';
const BRANCH = `chalk/${TICKET}`;
const SPEC = `specs/${TICKET}.md`;
const NOTES = `specs/${TICKET}.notes.md`;
const SYSTEM = readFileSync(join(import.meta.dirname, '..', 'share', 'prompts', 'system.md'), 'utf8');
const AUTHOR = { name: 'Bench Person', email: 'bench@example.com' };
const shipped = (name) => readFileSync(join(scriptsDir, `${name}.sh`), 'utf8');

// The scripts BEFORE ran (share/sandbox/scripts at 9b2272d^), verbatim but for comments.
const OLD_CLONE = `set -euo pipefail
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 2))); then
  echo "bash \${BASH_VERSINFO[0]}.\${BASH_VERSINFO[1]}" >&2
  exit 97
fi
command -v git >/dev/null || { echo "no git" >&2; exit 98; }
git config --global --add safe.directory '*'
git config --global user.name "$AUTHOR_NAME"
git config --global user.email "$AUTHOR_EMAIL"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
rm -rf /work/repo
git clone --quiet --shared --branch "$BRANCH" /src.git /work/repo
git -C /work/repo rev-parse HEAD`;
const OLD_EXPORT = `set -euo pipefail
cd /work/repo
rm -f /chalk/out.bundle
{ read -r head; read -r base; } < <(git rev-parse HEAD "$BASE^{commit}")
[ -n "\${base:-}" ] || { echo "export: $BASE is not a commit in the sandbox" >&2; exit 1; }
[ "$head" = "$base" ] && exit 0
git bundle create --quiet /chalk/out.bundle "$BASE..HEAD"
echo "$head"`;

// ---- helpers ----------------------------------------------------------------
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const rotate = (xs, i) => xs.map((_, k) => xs[(k + i) % xs.length]);

/** Runs a command to the end; its trimmed stdout, or throws with its last stderr line. */
function run(cmd, args, o = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...o });
  if (r.status !== 0) {
    const said = (r.stderr || r.error?.message || '').trim().split('\n');
    const why = said.find((l) => /error/i.test(l)) ?? said.pop();
    throw new Error(`${cmd} ${args.slice(0, 2).join(' ')} failed (exit ${r.status}): ${why}`);
  }
  return (r.stdout ?? '').trim();
}
const docker = (...args) => run('docker', args);
/** `docker exec` of a script with its arguments in env: `bash -c SCRIPT NAME ARGS...`. */
const dexec = (c, o) =>
  run(
    'docker',
    [
      'exec',
      ...(o.stdinFd === undefined ? [] : ['-i']),
      ...(o.user ? ['-u', o.user] : []),
      '-w',
      o.cwd ?? '/work/repo',
      ...Object.entries(o.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      c,
      'bash',
      '-c',
      o.script,
      o.name ?? 'bench',
      ...(o.args ?? []),
    ],
    o.stdinFd === undefined ? {} : { stdio: [o.stdinFd, 'pipe', 'pipe'] },
  );
const git = (cwd, ...args) => run('git', args, { cwd });
/** Host git with the harness's safety settings (hooks off, no fsmonitor, no external diff), as AFTER runs it. */
const safeGit = (cwd, ...args) => run('git', hostGitArgv(args), { cwd });

// ---- what the bench starts, and stops whatever happens ----------------------
const work = mkdtempSync(join(tmpdir(), 'chalk-bench-sbx-'));
const benchLabel = `chalk.bench=${process.pid}`;
const sandbox = new DockerSandbox({ image: IMAGE, tmpfsSize: TMPFS, telemetry: null, env: {}, handleSignals: false });
// gVisor, when the engine has it registered (CHALK_SANDBOX_RUNTIME=runsc): measured against runc below.
const gvisor = new DockerSandbox({
  image: IMAGE,
  tmpfsSize: TMPFS,
  telemetry: null,
  env: {},
  handleSignals: false,
  runtime: 'runsc',
});
const harnessRepos = new Set();
/** The mirrors the harness made for the bench's repositories (removed at the end), by repository key. */
const mirrorRepos = new Map();
let cleaned = false;
async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  await sandbox.closeAll().catch(() => undefined);
  await gvisor.closeAll().catch(() => undefined);
  for (const repo of harnessRepos) await sandbox.removeLeftovers({ repo }).catch(() => undefined);
  for (const m of mirrorRepos.values()) await sandbox.removeMirrors({ repo: m.repo, all: true }).catch(() => undefined);
  const left = spawnSync('docker', ['ps', '-aq', '--filter', `label=${benchLabel}`], { encoding: 'utf8' });
  const ids = (left.stdout ?? '').split('\n').filter(Boolean);
  if (ids.length) spawnSync('docker', ['rm', '-f', ...ids], { stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(sig, () => {
    cleanup().finally(() => process.exit(code));
  });
}

if (spawnSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' }).status !== 0) {
  console.error(
    `bench/sandbox.mjs: no image ${IMAGE} on the Docker engine; build it (chalk sandbox build) or set CHALK_IMAGE`,
  );
  rmSync(work, { recursive: true, force: true });
  process.exit(2);
}
const engineCpus = Number(docker('info', '--format', '{{.NCPU}}')) || 4;
const CPUS = autoCpus(engineCpus);
const USER = sandboxUser();
let seq = 0;
/** A run's own directory (the io dir BEFORE bind-mounted; AFTER's host-side bundles). */
function runDir() {
  const dir = join(work, `run-${seq++}`);
  mkdirSync(join(dir, 'io'), { recursive: true });
  // BEFORE's sandbox user wrote its bundle into the bind-mounted io dir.
  if (process.getuid?.() === 0) execFileSync('chown', ['10001:10001', join(dir, 'io')]);
  return dir;
}
const handName = () => `chalk-bench-${process.pid}-${seq++}`;
const hardening = [
  '--label',
  benchLabel,
  '--init',
  '--user',
  USER,
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '-e',
  'HOME=/home/chalk',
];

// ---- the three ways to start a sandbox and clone the ticket branch ----------
/** BEFORE, by hand: the old container (binds, no limits but pids) and the old clone script. */
function startBefore(repo) {
  const dir = runDir();
  const name = handName();
  const t0 = now();
  writeFileSync(join(dir, 'io', SYSTEM_PROMPT), SYSTEM);
  docker(
    'run',
    '-d',
    '--name',
    name,
    ...hardening,
    '--tmpfs',
    `/work:rw,exec,mode=1777,size=${TMPFS}`,
    '--tmpfs',
    '/home/chalk:rw,exec,mode=1777,size=1g',
    '--pids-limit',
    '4096',
    '-v',
    `${join(repo.root, '.git')}:/src.git:ro`,
    '-v',
    `${join(dir, 'io')}:/chalk:rw`,
    IMAGE,
    'sleep',
    'infinity',
  );
  dexec(name, {
    script: OLD_CLONE,
    cwd: '/work',
    env: { BRANCH, AUTHOR_NAME: AUTHOR.name, AUTHOR_EMAIL: AUTHOR.email },
  });
  return { ms: now() - t0, c: { name, io: join(dir, 'io') }, stop: () => docker('rm', '-f', name) };
}

/** What the harness logs while the bench starts sandboxes (the mirror's one line), kept for the output. */
const harnessLines = [];
const benchLog = {
  info: (m) => harnessLines.push(m),
  warn: (m) => harnessLines.push(`warning: ${m}`),
  error: (m) => harnessLines.push(`error: ${m}`),
  debug: () => {},
  child() {
    return benchLog;
  },
};

/**
 * AFTER, the harness: core/run/base/session.ts startSandbox, what openSandbox runs once the prompt
 * is built (the fork point, the mirror, made when missing, the thin bundle made while the sandbox
 * opens, then the clone and the system prompt side by side); with `whole`, a sandbox without
 * mirrors: the whole history streamed, as before them. The sandbox and host git are wrapped only
 * to time the steps.
 */
async function startAfter(repo, o = {}, sb = sandbox) {
  const dir = runDir();
  const t = {};
  let built = false;
  let mirror = null;
  let bundleMb = 0;
  const t0 = now();
  writeHostFile(join(dir, 'io', SYSTEM_PROMPT), SYSTEM);
  const name = `bench${process.pid}x${seq++}`;
  harnessRepos.add(name);
  const timed = {
    ...(o.whole
      ? {}
      : {
          mirrors: () => sb.mirrors(),
          makeMirror: async (x) => {
            const r = await sb.makeMirror(x);
            built = r.built;
            return r;
          },
        }),
    prepare: (spec) => sb.prepare(spec),
    open: async (spec) => {
      t.open0 = now();
      mirror = spec.mirror ?? null;
      if (mirror) mirrorRepos.set(mirror.repo.key, mirror);
      const session = await sb.open(spec);
      t.open1 = now();
      const [clone, put] = [session.clone.bind(session), session.putFile.bind(session)];
      session.clone = () => clone().finally(() => (t.clone = now()));
      session.putFile = (...a) => put(...a).finally(() => (t.put = now()));
      return session;
    },
  };
  const git = {
    ...gitPort,
    createBundle: async (x) => {
      const made = await gitPort.createBundle(x);
      bundleMb = statSync(made.out).size / 2 ** 20;
      return made;
    },
  };
  const { session } = await startSandbox({
    git,
    sandbox: timed,
    log: benchLog,
    root: repo.root,
    repo: name,
    ticket: TICKET,
    branch: BRANCH,
    baseBranch: 'main',
    source: join(dir, 'run.in.bundle'),
    depth: o.depth ?? 0,
    system: SYSTEM,
    env: {},
    runId: `bench-${seq}`,
  });
  const t4 = now();
  const ctx = {
    root: repo.root,
    repo: name,
    branch: BRANCH,
    ticket: TICKET,
    spec: SPEC,
    paths: { io: join(dir, 'io') },
  };
  return {
    ms: t4 - t0,
    // The thin bundle is made while the sandbox opens; clone and put run side by side from open's end.
    parts: { host: t.open0 - t0, open: t.open1 - t.open0, clone: t.clone - t.open1, put: t.put - t.open1 },
    bundleMb,
    built,
    mirror,
    session,
    ctx,
    stop: () => session.stop(),
  };
}

/** AFTER, by hand: the same container (docker CLI), the same bundle (host git), the shipped scripts. */
function startAfterByHand(repo) {
  const dir = runDir();
  const name = handName();
  const t0 = now();
  writeFileSync(join(dir, 'io', SYSTEM_PROMPT), SYSTEM);
  const source = join(dir, 'run.in.bundle');
  const base = git(repo.root, 'merge-base', 'main', 'HEAD');
  // Over the harness's mirror of the repository, when the first start made one: the thin bundle and its image.
  const mirror = [...mirrorRepos.values()].find((m) => m.repo.root === realpathSync(repo.root));
  let image = IMAGE;
  if (mirror) {
    git(repo.root, 'merge-base', '--is-ancestor', mirror.base, `refs/heads/${BRANCH}`);
    const tip = git(repo.root, 'rev-parse', `refs/heads/${BRANCH}`);
    const not = tip === mirror.base ? ['--not', `${mirror.base}^@`] : [`^${mirror.base}`];
    git(repo.root, 'bundle', 'create', '-q', source, `refs/heads/${BRANCH}`, ...not);
    image = mirrorTag(mirror.repo.key, docker('image', 'inspect', '-f', '{{.Id}}', IMAGE), mirror.base);
  } else git(repo.root, 'bundle', 'create', '-q', source, `refs/heads/${BRANCH}`);
  git(repo.root, 'bundle', 'list-heads', source);
  const tmpfs = [
    `/work:rw,exec,nosuid,nodev,mode=1777,size=${TMPFS}`,
    '/home/chalk:rw,exec,nosuid,nodev,mode=1777,size=1g',
    '/tmp:rw,exec,nosuid,nodev,mode=1777,size=1g',
    '/var/tmp:rw,nosuid,nodev,mode=1777,size=256m',
    '/chalk:rw,noexec,nosuid,nodev,mode=0755,size=16m',
  ];
  docker(
    'run',
    '-d',
    '--name',
    name,
    ...hardening,
    '--read-only',
    ...tmpfs.flatMap((t) => ['--tmpfs', t]),
    '--memory',
    `${MEMORY_MB}m`,
    '--memory-swap',
    `${MEMORY_MB}m`,
    '--cpus',
    String(CPUS),
    '--pids-limit',
    String(PIDS_LIMIT),
    image,
    'sleep',
    'infinity',
  );
  const mainPid = dexec(name, { script: 'cat /proc/1/task/1/children', cwd: '/' }).split(/\s+/)[0];
  const fd = openSync(source, 'r');
  try {
    dexec(name, {
      script: shipped('clone'),
      cwd: '/work',
      stdinFd: fd,
      env: {
        BRANCH,
        AUTHOR_NAME: AUTHOR.name,
        AUTHOR_EMAIL: AUTHOR.email,
        BASE_NAME: 'main',
        BASE_COMMIT: base,
        MIRROR: mirror ? '/opt/chalk-mirror.git' : '',
      },
    });
  } finally {
    closeSync(fd);
  }
  const put = openSync(join(dir, 'io', SYSTEM_PROMPT), 'r');
  try {
    dexec(name, { script: shipped('put-file'), cwd: '/', user: '0:0', stdinFd: put, env: { NAME: SYSTEM_PROMPT } });
  } finally {
    closeSync(put);
  }
  rmSync(source, { force: true });
  return { ms: now() - t0, c: { name, io: join(dir, 'io'), mainPid }, stop: () => docker('rm', '-f', name) };
}

// ---- one loop's git work, three ways ---------------------------------------
/** The agent's edit (not timed): a line appended to three files and a new file. */
const editCommand = (files, i) =>
  [0, 1, 2].map((k) => `printf 'loop ${i}\\n' >> '${files[(i * 7 + k * 131) % files.length]}'`).join(' && ') +
  ` && echo new > n${i}.txt`;

function commitByHand(c, i) {
  return dexec(c.name, { script: shipped('commit'), env: { MESSAGE: `chalk(${TICKET}): continue, loop ${i}` } });
}
const treeByHand = (c) => dexec(c.name, { script: shipped('tree-id'), env: { EXCLUDE: NOTES } });

/** BEFORE: the bundle into the bind-mounted io dir, host git fetches it and fast-forwards. */
function homeBefore(c, repo, base) {
  dexec(c.name, { script: OLD_EXPORT, env: { BASE: base } });
  git(repo.root, 'fetch', '--quiet', '--no-tags', join(c.io, 'out.bundle'), 'HEAD');
  git(repo.root, 'merge', '--ff-only', '--quiet', 'FETCH_HEAD');
  return git(repo.root, 'rev-parse', 'HEAD');
}

/** AFTER by hand: export in the sandbox, read back with read-file.sh's checks, then importBundle's and the guard's git steps. */
function homeAfterByHand(c, repo, base) {
  dexec(c.name, { script: shipped('export'), env: { BASE: base } });
  const dest = join(c.io, 'out.bundle');
  const part = `${dest}.part`;
  const fd = openSync(part, 'wx', 0o600);
  try {
    const r = spawnSync(
      'docker',
      [
        'exec',
        '-w',
        '/work/repo',
        c.name,
        'bash',
        '-c',
        shipped('read-file'),
        'read-file',
        '/tmp/.chalk-out/out.bundle',
        String(BUNDLE_MAX_BYTES),
      ],
      { stdio: ['ignore', fd, 'pipe'], maxBuffer: 1 << 20 },
    );
    if (r.status !== 0) throw new Error(`read-file failed (exit ${r.status})`);
  } finally {
    closeSync(fd);
  }
  renameSync(part, dest);
  const root = repo.root;
  const q = mkdtempSync(join(work, 'bundle-'));
  try {
    if (!lstatSync(dest).isFile()) throw new Error('the bundle is not a regular file');
    const copy = join(q, 'in.bundle');
    copyFileSync(dest, copy);
    safeGit(root, 'check-ref-format', `refs/heads/${BRANCH}`);
    safeGit(root, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`);
    safeGit(root, 'bundle', 'verify', '--quiet', copy);
    const heads = safeGit(root, 'bundle', 'list-heads', copy).split('\n');
    if (heads.length !== 1) throw new Error(`the bundle has ${heads.length} heads`);
    const [sha, ref] = heads[0].split(' ');
    // Ancestry in a quarantine repository borrowing the user's objects.
    const objects = safeGit(root, 'rev-parse', '--path-format=absolute', '--git-path', 'objects');
    const qr = join(q, 'quarantine.git');
    safeGit(q, 'init', '--quiet', '--bare', '--template=', qr);
    mkdirSync(join(qr, 'objects', 'info'), { recursive: true });
    writeFileSync(join(qr, 'objects', 'info', 'alternates'), `${objects}\n`);
    const fetch = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-auto-gc'];
    safeGit(qr, '-c', 'fetch.fsckObjects=true', ...fetch, copy, `${ref}:refs/chalk/quarantine`);
    if (safeGit(qr, 'rev-parse', '--verify', 'refs/chalk/quarantine') !== sha) throw new Error('head mismatch');
    safeGit(qr, 'merge-base', '--is-ancestor', base, sha);
    safeGit(root, 'symbolic-ref', '--quiet', '--short', 'HEAD');
    safeGit(root, 'rev-parse', '--verify', 'HEAD');
    // Into a temporary ref, ancestry again, the guard's reads of the tip, the fast-forward.
    const incoming = `refs/chalk/incoming/bench${seq++}`;
    safeGit(root, '-c', 'fetch.fsckObjects=true', ...fetch, copy, `${ref}:${incoming}`);
    const tip = safeGit(root, 'rev-parse', '--verify', incoming);
    safeGit(root, 'merge-base', '--is-ancestor', base, tip);
    safeGit(root, 'diff', '--name-only', '-z', '--no-renames', base, tip, '--');
    for (const rev of [base, tip]) {
      const blob = safeGit(root, 'ls-tree', '-z', rev, '--', SPEC).split(/\s/)[2];
      safeGit(root, 'cat-file', 'blob', blob);
    }
    spawnSync('git', hostGitArgv(['config', '--get', '--', 'core.hooksPath']), { cwd: root });
    safeGit(root, 'merge', '--ff-only', '--quiet', '--no-stat', tip);
    safeGit(root, 'update-ref', '-d', incoming);
    return safeGit(root, 'rev-parse', '--verify', 'HEAD');
  } finally {
    rmSync(q, { recursive: true, force: true });
  }
}

// ---- the measurements -------------------------------------------------------
const VARIANTS = ['before', 'after', 'hand'];

/**
 * The starts on one repository: first the harness's first start, which makes the repository's
 * mirror (timed alone), then BEFORE, AFTER, AFTER BY HAND and AFTER with the whole history
 * streamed (no mirror: the design before mirrors), alternated.
 */
async function measureStarts(repo, label) {
  const variants = ['before', 'after', 'hand', 'whole'];
  const ms = { before: [], after: [], hand: [], whole: [] };
  const parts = { after: [], whole: [] };
  const mb = {};
  const first = await startAfter(repo);
  await first.stop();
  if (!first.built) throw new Error(`${label}: the first start made no mirror (${harnessLines.at(-1) ?? 'no line'})`);
  for (let i = 0; i < counts.starts; i++) {
    for (const v of rotate(variants, i)) {
      const s =
        v === 'before'
          ? startBefore(repo)
          : v === 'hand'
            ? startAfterByHand(repo)
            : await startAfter(repo, v === 'whole' ? { whole: true } : {});
      try {
        ms[v].push(s.ms);
        if (v === 'after' || v === 'whole') {
          if (v === 'after' && (s.built || !s.mirror))
            throw new Error(`${label}: a measured start made or had no mirror`);
          parts[v].push(s.parts);
          mb[v] = s.bundleMb;
        }
      } finally {
        await s.stop();
      }
    }
  }
  const part = (v, k) => median(parts[v].map((p) => p[k]));
  const detail = (v) =>
    `host (HEAD, fork point, mirror; the network meanwhile) ${fmt(part(v, 'host'))}, open ${fmt(part(v, 'open'))} (the thin bundle meanwhile), ` +
    `clone ${fmt(part(v, 'clone'))} and system prompt ${fmt(part(v, 'put'))} side by side; bundle ${mb[v].toFixed(2)} MB`;
  return {
    label,
    ms,
    bundleMb: mb.whole,
    parts: parts.after,
    first,
    detail:
      `after's start, ${label}: ${detail('after')}\n` +
      `  after's first start, ${label} (makes the mirror): ${fmt(first.ms)} (host ${fmt(first.parts.host)}, open ${fmt(first.parts.open)}, clone ${fmt(first.parts.clone)})\n` +
      `  after with the whole history (no mirror), ${label}: ${fmt(median(ms.whole))}: ${detail('whole')}`,
  };
}

/** DEPTH: the harness's default start (over the mirror) against CHALK_CLONE_DEPTH (the whole bundle of a shallow copy), alternated. */
async function measureDepth(repo) {
  const ms = { full: [], depth: [] };
  const parts = { full: [], depth: [] };
  const mb = {};
  let commits = 0;
  for (let i = 0; i < counts.starts; i++) {
    for (const v of rotate(['full', 'depth'], i)) {
      const s = await startAfter(repo, v === 'depth' ? { depth: counts.depth } : {});
      try {
        ms[v].push(s.ms);
        parts[v].push(s.parts);
        mb[v] = s.bundleMb;
        if (v === 'depth') commits = Number((await s.session.exec('git rev-list --count HEAD')).stdout.trim());
      } finally {
        await s.stop();
      }
    }
  }
  return { ms, parts, mb, commits };
}

/** A worktree of its own for each variant's loops (a local clone of the repository, the ticket branch checked out). */
function ownCopy(repo, v) {
  const root = join(work, `${v}-${seq++}`, repo.name);
  git(work, 'clone', '-q', '--branch', BRANCH, repo.root, root);
  git(root, 'branch', '-q', 'main', 'origin/main');
  git(root, 'config', 'user.name', AUTHOR.name);
  git(root, 'config', 'user.email', AUTHOR.email);
  return { ...repo, root };
}

async function measureLoops(repo, label) {
  const steps = ['commit', 'home', 'tree', 'reap'];
  const ms = Object.fromEntries(VARIANTS.map((v) => [v, Object.fromEntries(steps.map((s) => [s, []]))]));
  const copies = Object.fromEntries(VARIANTS.map((v) => [v, ownCopy(repo, v)]));
  const started = {};
  try {
    started.before = startBefore(copies.before);
    started.after = await startAfter(copies.after);
    started.hand = startAfterByHand(copies.hand);
    const base = Object.fromEntries(VARIANTS.map((v) => [v, git(copies[v].root, 'rev-parse', 'HEAD')]));
    for (let i = 0; i < counts.loops; i++) {
      const trees = {};
      for (const v of rotate(VARIANTS, i)) {
        const s = started[v];
        const r = copies[v];
        const t = ms[v];
        const edit = editCommand(repo.files, i);
        if (v === 'after') {
          const e = await s.session.exec(edit);
          if (e.exitCode !== 0) throw new Error(`the edit failed in the sandbox: ${e.stderr.trim()}`);
          let t0 = now();
          await s.session.commitAll(`chalk(${TICKET}): continue, loop ${i}`);
          t.commit.push(now() - t0);
          t0 = now();
          const home = await homecoming(s.ctx, s.session, {
            base: base[v],
            target: { kind: 'fast-forward', branch: BRANCH },
            textbook: '.chalk/textbook.md',
            forgeGuarded: [],
          });
          if (home.kind !== 'home')
            throw new Error(`bringHome: ${home.kind} ${home.reason ?? home.verdict?.reason ?? ''}`);
          base[v] = home.head;
          t.home.push(now() - t0);
          t0 = now();
          trees[v] = await s.session.treeId([NOTES]);
          t.tree.push(now() - t0);
          t0 = now();
          await s.session.reapStrays();
          t.reap.push(now() - t0);
        } else {
          dexec(s.c.name, { script: edit });
          let t0 = now();
          commitByHand(s.c, i);
          t.commit.push(now() - t0);
          t0 = now();
          base[v] = v === 'before' ? homeBefore(s.c, r, base[v]) : homeAfterByHand(s.c, r, base[v]);
          t.home.push(now() - t0);
          t0 = now();
          trees[v] = treeByHand(s.c);
          t.tree.push(now() - t0);
          // reap.sh is gone (the keeper reaps, on the engine's signal); the by-hand container has no keeper.
          if (v === 'hand' && existsSync(join(scriptsDir, 'reap.sh'))) {
            t0 = now();
            dexec(s.c.name, { script: shipped('reap'), name: 'reap', args: [s.c.mainPid || '0'], cwd: '/' });
            t.reap.push(now() - t0);
          }
        }
      }
      if (new Set(Object.values(trees)).size !== 1)
        throw new Error(`loop ${i}: the tree ids differ: ${JSON.stringify(trees)}`);
    }
    // Every variant brought every loop home as a fast-forward, to the same tree.
    const start = Number(git(repo.root, 'rev-list', '--count', 'HEAD'));
    const homeTrees = new Set();
    for (const v of VARIANTS) {
      const n = Number(git(copies[v].root, 'rev-list', '--count', 'HEAD'));
      if (n !== start + counts.loops) throw new Error(`${v}: ${n - start} commits came home, not ${counts.loops}`);
      if (git(copies[v].root, 'rev-list', '--merges', '--count', 'HEAD') !== '0')
        throw new Error(`${v}: a merge came home`);
      homeTrees.add(git(copies[v].root, 'rev-parse', 'HEAD^{tree}'));
    }
    if (homeTrees.size !== 1) throw new Error('the variants brought different trees home');
  } finally {
    for (const s of Object.values(started)) await s.stop();
  }
  const total = (v) => ms[v].commit.map((_, k) => steps.reduce((sum, s) => sum + (ms[v][s][k] ?? 0), 0));
  return { label, ms, total: Object.fromEntries(VARIANTS.map((v) => [v, total(v)])) };
}

/**
 * The harness under runsc against runc, alternated on the small repository: start + clone,
 * and a loop's own commands (an edit, commitAll, the tree id, a Node process as a rubric's
 * first step would start one, reapStrays). Null when the engine has no runsc runtime.
 */
async function measureRuntimes(repo) {
  const has = JSON.parse(docker('info', '--format', '{{json .Runtimes}}'));
  if (!has || !('runsc' in has)) return null;
  const ms = { runc: { start: [], loop: [] }, runsc: { start: [], loop: [] } };
  for (let i = 0; i < counts.starts; i++) {
    for (const v of rotate(['runc', 'runsc'], i)) {
      const s = await startAfter(repo, {}, v === 'runc' ? sandbox : gvisor);
      try {
        ms[v].start.push(s.ms);
        for (let k = 0; k < 3; k++) {
          const t0 = now();
          const e = await s.session.exec(editCommand(repo.files, k));
          if (e.exitCode !== 0) throw new Error(`the edit failed under ${v}: ${e.stderr.trim()}`);
          await s.session.commitAll(`chalk(${TICKET}): continue, loop ${k}`);
          await s.session.treeId([NOTES]);
          const n = await s.session.exec('node -e "process.exit(0)"');
          if (n.exitCode !== 0) throw new Error(`node failed under ${v}: ${n.stderr.trim()}`);
          await s.session.reapStrays();
          ms[v].loop.push(now() - t0);
        }
      } finally {
        await s.stop();
      }
    }
  }
  return ms;
}

// ---- output -----------------------------------------------------------------
const fmt = (x) => (x === undefined || Number.isNaN(x) ? '-' : `${x.toFixed(0)} ms`);
const ratio = (a, b) => (a === undefined || b === undefined || !b ? '-' : `${(a / b).toFixed(2)}x`);
const med = (xs) => (xs?.length ? median(xs) : undefined);
const header = `${''.padEnd(30)}${'before'.padStart(10)}${'after'.padStart(10)}${'after by hand'.padStart(15)}${'after/before'.padStart(14)}${'harness/hand'.padStart(14)}`;
function row(label, before, after, hand) {
  const [b, a, h] = [med(before), med(after), med(hand)];
  return `${label.padEnd(30)}${fmt(b).padStart(10)}${fmt(a).padStart(10)}${fmt(h).padStart(15)}${ratio(a, b).padStart(14)}${ratio(a, h).padStart(14)}`;
}

try {
  const t0 = now();
  const small = {
    name: `small${process.pid}`,
    ...makeSmallRepo(join(work, 'src-small', `small${process.pid}`), TICKET),
  };
  const big = {
    name: `big${process.pid}`,
    ...(await makeHistoryRepo(join(work, 'src-big', `big${process.pid}`), {
      ticket: TICKET,
      commits: counts.commits,
      files: counts.files,
    })),
  };
  const generated = now() - t0;
  const only = counts.only;
  let depthLine = null;
  /** DEPTH, after the starts (whose first start on the history repository makes its mirror). */
  const depth = async () => {
    const d = await measureDepth(big);
    const part = (v, k) => median(d.parts[v].map((p) => p[k]));
    depthLine =
      `CHALK_CLONE_DEPTH=${counts.depth} on ${big.commitCount} commits (no mirror) against the default start (over the mirror): start + clone ${fmt(median(d.ms.depth))} against ${fmt(median(d.ms.full))} ` +
      `(${ratio(median(d.ms.depth), median(d.ms.full))}); clone ${fmt(part('depth', 'clone'))} against ${fmt(part('full', 'clone'))}, ` +
      `host (shallow copy and bundle) ${fmt(part('depth', 'host'))} against ${fmt(part('full', 'host'))}; ` +
      `bundle ${d.mb.depth.toFixed(1)} MB against ${d.mb.full.toFixed(1)} MB; ${d.commits} commits in the sandbox`;
  };
  if (only === 'depth') {
    await depth();
    console.log(`sandbox bench, DEPTH only: ${IMAGE}, medians of ${counts.starts} starts each, alternated`);
    console.log(depthLine);
  } else {
    const starts = [];
    const loops = [];
    for (const [repo, label] of [
      [small, 'small'],
      [big, 'big'],
    ]) {
      starts.push(await measureStarts(repo, label));
      if (only !== 'start') loops.push(await measureLoops(repo, label));
    }
    const sBig = starts[1];
    console.log(
      `sandbox bench${only ? `, ${only} only` : ''}: ${IMAGE}, engine ${engineCpus} CPUs (AFTER's limits: ${CPUS} CPU, ${MEMORY_MB} MiB); ` +
        `medians of ${counts.starts} starts${only ? '' : ` and ${counts.loops} loops`} per repository, runs alternated`,
    );
    console.log(
      `repositories: small 200 files, 1 commit; big ${big.fileCount} files, ${big.commitCount} commits, ` +
        `${big.packMb.toFixed(1)} MB packed, ${sBig.bundleMb.toFixed(1)} MB bundle (generated in ${(generated / 1000).toFixed(1)} s)`,
    );
    console.log(header);
    for (const s of starts) console.log(row(`start + clone, ${s.label}`, s.ms.before, s.ms.after, s.ms.hand));
    for (const s of starts) console.log(`  ${s.detail}`);
    const names = { commit: 'commit', home: 'bring home', tree: 'tree id', reap: 'reap strays' };
    for (const l of loops) {
      for (const [k, name] of Object.entries(names)) {
        console.log(row(`loop ${name}, ${l.label}`, l.ms.before[k], l.ms.after[k], l.ms.hand[k]));
      }
      console.log(row(`loop total, ${l.label}`, l.total.before, l.total.after, l.total.hand));
    }
    const delta = (a, b) => {
      const d = med(a) - med(b);
      return `${d >= 0 ? '+' : ''}${d.toFixed(0)} ms (${ratio(med(a), med(b))})`;
    };
    const [ss, sb] = starts;
    const bigClone = median(sb.parts.map((p) => p.clone));
    if (loops.length > 0) {
      const [ls, lb] = loops;
      console.log(
        `what the safety costs: start + clone ${delta(ss.ms.after, ss.ms.before)} small, ${delta(sb.ms.after, sb.ms.before)} big ` +
          `(AFTER's clone alone ${fmt(bigClone)}); ` +
          `per loop ${delta(ls.total.after, ls.total.before)} small, ${delta(lb.total.after, lb.total.before)} big ` +
          `(bring home ${delta(lb.ms.after.home, lb.ms.before.home)}, reap ${fmt(med(lb.ms.after.reap))}); ` +
          `the harness against the same steps by hand, big: start ${ratio(med(sb.ms.after), med(sb.ms.hand))}, loop ${ratio(med(lb.total.after), med(lb.total.hand))}`,
      );
    }
    const startRatio = med(sb.ms.after) / med(sb.ms.before);
    console.log(
      `start + clone, big: AFTER ${fmt(med(sb.ms.after))} against BEFORE ${fmt(med(sb.ms.before))}: ${startRatio.toFixed(2)}x; ` +
        `target at most ${START_TARGET}x: ${startRatio <= START_TARGET ? 'MET' : 'NOT MET'} ` +
        `(whole history, no mirror: ${fmt(med(sb.ms.whole))}, ${ratio(med(sb.ms.whole), med(sb.ms.before))}; ` +
        `the first start, which made the mirror: ${fmt(sb.first.ms)}, ${ratio(sb.first.ms, med(sb.ms.before))})`,
    );
    if (!only) await depth();
    const said = harnessLines.filter((l) => /mirror|warning|error/.test(l));
    for (const l of new Set(said.map((l) => l.replace(/[0-9a-f]{12}/, '<commit>')))) console.log(`harness said: ${l}`);
    if (depthLine) console.log(depthLine);
    if (!only) {
      const rt = await measureRuntimes(small);
      if (!rt) console.log('runsc (gVisor): not registered with this engine; nothing to compare');
      else {
        console.log(
          `runsc (gVisor) against runc, small, alternated: start + clone ${fmt(med(rt.runc.start))} -> ${fmt(med(rt.runsc.start))} (${ratio(med(rt.runsc.start), med(rt.runc.start))}); ` +
            `a loop's commands (edit, commit, tree id, node, reap) ${fmt(med(rt.runc.loop))} -> ${fmt(med(rt.runsc.loop))} (${ratio(med(rt.runsc.loop), med(rt.runc.loop))})`,
        );
      }
    }
  }
} finally {
  await cleanup();
}
