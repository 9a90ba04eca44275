#!/usr/bin/env node
// The sandbox's cost, in one run, against the same steps done by hand:
//  1. container start plus clone: DockerSandbox.open + clone, against
//     `docker run -d` (same flags) + `docker exec git clone --shared`.
//  2. per-loop overhead: commit everything, export the bundle, fetch it on the
//     host and fast-forward, then the tree id; the harness's session methods
//     against the same git commands through `docker exec` and host git.
// Runs alternate (harness, by hand, harness, ...) so machine load hits both alike.
// Needs the Docker engine and the sandbox image; run after `npm run build`:
//   node bench/sandbox.mjs [loops] [starts]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dist = join(import.meta.dirname, '..', 'dist');
const { DockerSandbox } = await import(join(dist, 'plugins/sandbox-docker/sandbox.js'));

const loops = Number(process.argv[2] ?? 20);
const starts = Number(process.argv[3] ?? 5);
const image = process.env.CHALK_IMAGE || 'chalk-sandbox:local';

const sh = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const docker = (...args) => {
  const r = spawnSync('docker', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`docker ${args[0]} failed: ${r.stderr}`);
  return r.stdout.trim();
};
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function makeRepo(label) {
  const dir = mkdtempSync(join(tmpdir(), `chalk-bench-sbx-${label}-`));
  const root = join(dir, `bench${label}`);
  mkdirSync(root);
  const git = (...a) => sh('git', a, root);
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Bench');
  git('config', 'user.email', 'bench@example.com');
  // A repository with some body: 200 files.
  for (let i = 0; i < 200; i++) writeFileSync(join(root, `f${i}.txt`), `file ${i}\n`.repeat(50));
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  git('checkout', '-q', '-b', 'chalk/BEN-1');
  const io = join(dir, 'io');
  mkdirSync(io);
  if (process.getuid?.() === 0) execFileSync('chown', ['10001:10001', io]);
  return { dir, root, io, git, repo: `bench${label}` };
}

const sandbox = new DockerSandbox({ image, tmpfsSize: '512m', telemetry: null, env: {}, handleSignals: true });
const user = process.getuid?.() === 0 ? '10001:10001' : `${process.getuid()}:${process.getgid()}`;

/** The container the harness would start, started by hand with the docker CLI (same flags). */
function startHandContainer(name, r) {
  docker(
    'run',
    '-d',
    '--name',
    name,
    '--init',
    '--user',
    user,
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--tmpfs',
    '/work:rw,exec,mode=1777,size=512m',
    '--tmpfs',
    '/home/chalk:rw,exec,mode=1777,size=1g',
    '-v',
    `${join(r.root, '.git')}:/src.git:ro`,
    '-v',
    `${r.io}:/chalk`,
    '-e',
    'HOME=/home/chalk',
    image,
    'sleep',
    'infinity',
  );
}

// ---- 1. start + clone -------------------------------------------------------
const startHarness = [];
const startHand = [];
for (let i = 0; i < starts; i++) {
  {
    const r = makeRepo(`h${i}`);
    const t0 = now();
    const s = await sandbox.open({
      repo: r.repo,
      gitDir: join(r.root, '.git'),
      ticket: 'BEN-1',
      runId: `b${i}`,
      branch: 'chalk/BEN-1',
      ioDir: r.io,
    });
    await s.clone();
    startHarness.push(now() - t0);
    await s.stop();
    rmSync(r.dir, { recursive: true, force: true });
  }
  {
    const r = makeRepo(`m${i}`);
    const name = `chalk-bench-hand-${process.pid}-${i}`;
    const t0 = now();
    startHandContainer(name, r);
    docker(
      'exec',
      name,
      'bash',
      '-c',
      "git config --global --add safe.directory '*' && git clone -q --shared --branch chalk/BEN-1 /src.git /work/repo",
    );
    startHand.push(now() - t0);
    docker('rm', '-f', name);
    rmSync(r.dir, { recursive: true, force: true });
  }
}

// ---- 2. per-loop overhead ---------------------------------------------------
const h = makeRepo('loop-h');
const s = await sandbox.open({
  repo: h.repo,
  gitDir: join(h.root, '.git'),
  ticket: 'BEN-2',
  runId: 'loop',
  branch: 'chalk/BEN-1',
  ioDir: h.io,
});
await s.clone();
const m = makeRepo('loop-m');
const hand = `chalk-bench-hand-loop-${process.pid}`;
startHandContainer(hand, m);
docker(
  'exec',
  hand,
  'bash',
  '-c',
  "git config --global --add safe.directory '*' && git config --global user.name B && git config --global user.email b@b && git clone -q --shared --branch chalk/BEN-1 /src.git /work/repo",
);

const loopHarness = [];
const loopHand = [];
let baseH = h.git('rev-parse', 'HEAD');
let baseM = m.git('rev-parse', 'HEAD');
try {
  for (let i = 0; i < loops; i++) {
    // The agent's edit (not timed).
    await s.exec(`echo "loop ${i}" >> f${i % 200}.txt && echo new > n${i}.txt`);
    let t0 = now();
    await s.commitAll(`chalk(BEN-2): continue, loop ${i}`);
    baseH = (await s.bringHome(baseH, h.root)) ?? baseH;
    await s.treeId(['specs/*.notes.md']);
    loopHarness.push(now() - t0);

    docker(
      'exec',
      '-w',
      '/work/repo',
      hand,
      'bash',
      '-c',
      `echo "loop ${i}" >> f${i % 200}.txt && echo new > n${i}.txt`,
    );
    t0 = now();
    docker('exec', '-w', '/work/repo', hand, 'bash', '-c', `git add -A && git commit -q -m "loop ${i}"`);
    docker('exec', '-w', '/work/repo', hand, 'git', 'bundle', 'create', '-q', '/chalk/out.bundle', `${baseM}..HEAD`);
    sh('git', ['fetch', '-q', '--no-tags', join(m.io, 'out.bundle'), 'HEAD'], m.root);
    sh('git', ['merge', '--ff-only', '-q', 'FETCH_HEAD'], m.root);
    baseM = sh('git', ['rev-parse', 'HEAD'], m.root);
    docker(
      'exec',
      '-w',
      '/work/repo',
      hand,
      'bash',
      '-c',
      "cp .git/index .git/fp && GIT_INDEX_FILE=.git/fp git add -A -- . ':(exclude)specs/*.notes.md' && GIT_INDEX_FILE=.git/fp git write-tree",
    );
    loopHand.push(now() - t0);
  }
  // Both sides really brought every loop home as a fast-forward.
  for (const r of [h, m]) {
    const n = Number(r.git('rev-list', '--count', 'HEAD'));
    if (n !== loops + 1) throw new Error(`${r.repo}: expected ${loops + 1} commits on the branch, found ${n}`);
  }
} finally {
  await s.stop();
  docker('rm', '-f', hand);
  rmSync(h.dir, { recursive: true, force: true });
  rmSync(m.dir, { recursive: true, force: true });
}

const fmt = (x) => `${x.toFixed(0)} ms`;
const row = (label, a, b) =>
  `${label.padEnd(28)} harness ${fmt(median(a)).padStart(8)}   by hand ${fmt(median(b)).padStart(8)}   ratio ${(median(a) / median(b)).toFixed(2)}`;
console.log(`sandbox bench: image ${image}, ${starts} starts, ${loops} loops (medians)`);
console.log(row('start + clone', startHarness, startHand));
console.log(row('per loop (commit..tree id)', loopHarness, loopHand));
