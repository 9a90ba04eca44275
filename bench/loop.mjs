#!/usr/bin/env node
// The run loop's own time per loop: everything a loop does except the agent
// call and the rubric (prompt, fingerprint, commit, bringing the work home,
// the runs row, verdict, hooks), measured on a real `chalk run` in-process with
// the scripted model, against the bare docker and git steps a loop needs
// (tree id, commit, bundle in the container; fetch and fast-forward on the
// host), timed in the same run on a container of the same image.
// Target: at most 1.5x. Run after `npm run build`, with Docker and the image:
//   node bench/loop.mjs [loops]
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOOPS = Math.max(3, Number(process.argv[2] ?? 6));
const dist = join(import.meta.dirname, '..', 'dist');
const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';
const TICKET = 'BENCH-1';
const RUBRIC = 'sh check.sh';

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(0)} ms`;

// --- a repository whose spec has one checkpoint per loop --------------------
const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-loop-'));
const root = join(dir, `benchrepo${process.pid}`);
mkdirSync(join(root, 'specs'), { recursive: true });
git(root, 'init', '-q', '-b', 'main');
git(root, 'config', 'user.name', 'Bench');
git(root, 'config', 'user.email', 'bench@example.com');
writeFileSync(
  join(root, 'check.sh'),
  'for f in out/*.txt; do [ -e "$f" ] || continue; grep -q ok "$f" || exit 1; done\n',
);
writeFileSync(join(root, 'README.md'), '# bench\n');
git(root, 'add', '-A');
git(root, 'commit', '-q', '-m', 'initial');
git(root, 'checkout', '-q', '-b', `chalk/${TICKET}`);
const checkpoints = Array.from({ length: LOOPS }, (_, i) => `- [ ] out/${i + 1}.txt says ok`).join('\n');
writeFileSync(join(root, 'specs', `${TICKET}.md`), `# ${TICKET}: bench\n\n## Checkpoints\n${checkpoints}\n`);
git(root, 'add', '-A');
git(root, 'commit', '-q', '-m', `chalk(${TICKET}): spec`);

// --- the scripted model: each loop writes one file and ticks one checkpoint --
const { startModelServer } = await import(join(dist, 'demo', 'model-server.js'));
const s = await import(join(dist, 'demo', 'model-script.js'));
let n = 0;
const model = await startModelServer({
  pick: () => {
    n++;
    return [
      s.bash(`mkdir -p out && echo ok > out/${n}.txt && sed -i '0,/- \\[ \\]/s//- [x]/' specs/${TICKET}.md`),
      s.loopDone(String(n), `wrote out/${n}.txt`),
    ];
  },
});

const state = mkdtempSync(join(tmpdir(), 'chalk-bench-loop-state-'));
Object.assign(process.env, {
  XDG_STATE_HOME: process.env.XDG_STATE_HOME ?? state,
  ANTHROPIC_API_KEY: 'sk-ant-bench-dummy',
  ANTHROPIC_BASE_URL: model.url,
  CHALK_PERMISSION_MODE: 'bypass',
  CHALK_IMAGE: IMAGE,
  CHALK_TEST_CMD: RUBRIC,
  CHALK_SPEC_CHECK: 'false',
  CHALK_REVIEW: 'false',
  CHALK_AUTO_MR: 'false',
  CHALK_DECIDER: 'off',
  CHALK_DISTILL: 'false',
  CHALK_MAX_LOOPS: String(LOOPS + 1),
});
process.chdir(root);

// --- chalk run, in-process, with the agent and the rubric timed ------------
const { commandContext, kernelContext } = await import(join(dist, 'cli', 'context.js'));
const { depsFromKernel } = await import(join(dist, 'core', 'run', 'base', 'deps.js'));
const { runTicket } = await import(join(dist, 'core', 'run', 'loop', 'run-ticket.js'));
const base = await commandContext();
const { kernel } = await kernelContext(base);
const deps = depsFromKernel(kernel);
const agentCalls = []; // [start, end] of each loop call
const rubricRuns = []; // [start, end] of each rubric run
const sessionCalls = []; // [method, start, end] of the other sandbox calls
const realAgent = deps.agent;
deps.agent = Object.create(realAgent, {
  call: {
    value: async (kind, prompt, opts) => {
      const t0 = now();
      try {
        return await realAgent.call(kind, prompt, opts);
      } finally {
        agentCalls.push([t0, now()]);
      }
    },
  },
});
const realSandbox = deps.sandbox;
deps.sandbox = Object.create(realSandbox, {
  open: {
    value: async (spec) => {
      const session = await realSandbox.open(spec);
      return new Proxy(session, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target);
          if (typeof v !== 'function') return v;
          return async (...args) => {
            const t0 = now();
            try {
              return await v.apply(target, args);
            } finally {
              const t1 = now();
              const command = prop === 'exec' ? String(args[0]) : '';
              if (command.includes(RUBRIC) && !command.includes('claude')) rubricRuns.push([t0, t1]);
              else if (!command.includes('claude')) sessionCalls.push([String(prop), t0, t1]);
            }
          };
        },
      });
    },
  },
});

// Every round of reaping, timed on the session class itself: the one that opens
// each agent call (SandboxSession.exec) happens inside the call, so the proxy
// above would book it to the agent; it is the harness's, and counted as such.
const { DockerSandboxSession } = await import(join(dist, 'plugins', 'sandbox-docker', 'session.js'));
const reaps = []; // [start, end] of each reapStrays
const realReap = DockerSandboxSession.prototype.reapStrays;
DockerSandboxSession.prototype.reapStrays = async function (...args) {
  const t0 = now();
  try {
    return await realReap.apply(this, args);
  } finally {
    reaps.push([t0, now()]);
  }
};

const t0 = now();
const result = await runTicket(deps, { root });
const total = now() - t0;
await deps.store.close().catch(() => {});
await model.close();
// The embedded database this run started in its own state directory goes with it.
if (!process.env.CHALK_DATABASE_URL && process.env.XDG_STATE_HOME === state) {
  const { embeddedPathsIn, stopEmbedded } = await import(join(dist, 'core', 'store', 'index.js'));
  await stopEmbedded(embeddedPathsIn(join(state, 'chalk', 'db'))).catch(() => {});
}
if (result.exitCode !== 0 || agentCalls.length !== LOOPS) {
  console.error(`the run did not finish its ${LOOPS} loops: exit ${result.exitCode}, ${agentCalls.length} calls`);
  process.exit(1);
}
// Loop k's own time: from the end of its agent call to the start of the next
// one, less its rubric run (the next loop's prompt building included), plus the
// reaping that opens the next call.
const own = [];
const reapBeforeCall = [];
const within = ([a, b], [c, d]) => a >= c && b <= d;
for (let k = 0; k + 1 < agentCalls.length; k++) {
  const [, end] = agentCalls[k];
  const [next] = agentCalls[k + 1];
  const rubric = rubricRuns.filter(([a, b]) => a >= end && b <= next).reduce((sum, [a, b]) => sum + (b - a), 0);
  const opening = reaps.filter((r) => within(r, agentCalls[k + 1])).reduce((sum, [a, b]) => sum + (b - a), 0);
  reapBeforeCall.push(opening);
  own.push(next - end - rubric + opening);
}
const reapsBetween = reaps.filter(([a]) =>
  agentCalls.slice(0, -1).some(([, end], k) => a >= end && a <= agentCalls[k + 1][0]),
);
// Where the own time goes: sandbox calls between loop calls, per method.
const between = sessionCalls.filter(([, a]) =>
  agentCalls.slice(0, -1).some(([, end], k) => a >= end && a <= agentCalls[k + 1][0]),
);
const perMethod = new Map();
for (const [m, a, b] of between) perMethod.set(m, [...(perMethod.get(m) ?? []), b - a]);
const gaps = agentCalls.length - 1;
const breakdown = [...perMethod].map(
  ([m, xs]) => `${m} ${(xs.reduce((x, y) => x + y, 0) / gaps).toFixed(0)} ms (${(xs.length / gaps).toFixed(1)}x)`,
);
const agentMs = median(agentCalls.map(([a, b]) => b - a));
const rubricMs = median(rubricRuns.map(([a, b]) => b - a));

// --- the bare steps, on a container of the same image ----------------------
const io = join(dir, 'bare-io');
mkdirSync(io);
chmodSync(io, 0o777);
const bareHost = join(dir, 'bare-host');
git(dir, 'clone', '-q', '--branch', 'main', root, bareHost);
const name = `chalk-bench-loop-bare-${process.pid}`;
execFileSync('docker', [
  'run',
  '-d',
  '--rm',
  '--name',
  name,
  '--tmpfs',
  '/work:uid=10001,gid=10001,mode=0755',
  '--tmpfs',
  '/home/chalk:uid=10001,gid=10001,mode=0755',
  '-v',
  `${join(root, '.git')}:/src.git:ro`,
  '-v',
  `${io}:/chalk`,
  IMAGE,
  'sleep',
  'infinity',
]);
const exec = (cmd) => {
  const r = spawnSync('docker', ['exec', '-w', '/work/repo', name, 'bash', '-c', cmd], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
  return r.stdout.trim();
};
// The same exec through the Engine API (what the harness uses), for the stricter ratio.
const { default: Docker } = await import('dockerode');
const api = new Docker().getContainer(name);
const apiExec = async (cmd) => {
  const e = await api.exec({
    Cmd: ['bash', '-c', cmd],
    WorkingDir: '/work/repo',
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await e.start({ hijack: true, stdin: false });
  await new Promise((res, rej) => {
    stream.on('end', res);
    stream.on('error', rej);
    stream.resume();
  });
  const { ExitCode } = await e.inspect();
  if (ExitCode !== 0) throw new Error(`${cmd}: exit ${ExitCode}`);
};
const bare = [];
const bareApi = [];
// What the homecoming's new checks add on the host, in the same loop: importBundle as it is now
// (pack walk, head type, tree caps, worktree checks, filter drivers off) with the guard's reads,
// against the git calls it made before them (the same calls in the same order: target, base,
// verify, heads, quarantine fetch and ancestry, HEAD, fetch, ancestry, the guard's reads,
// fast-forward), each on a host clone of its own.
const { importBundle } = await import(join(dist, 'core', 'git', 'bundle-import.js'));
const { configGet, fileAt, includedConfigFiles } = await import(join(dist, 'core', 'git', 'host-git.js'));
const SPEC = `specs/${TICKET}.md`;
// The guard's reads of the tip (core/run/base/home.ts judge), now: the changed paths come with the tip.
const guardNow = (host) => async (tip, changed) => {
  await Promise.all([
    changed,
    fileAt(host, { rev: 'HEAD', path: SPEC }),
    fileAt(host, { rev: tip, path: SPEC }),
    configGet(host, 'core.hooksPath'),
    includedConfigFiles(host),
  ]);
  return null;
};
const checkedHost = join(dir, 'checked-host');
const plainHost = join(dir, 'plain-host');
for (const host of [checkedHost, plainHost]) git(dir, 'clone', '-q', '--branch', 'main', root, host);
const gitAsync = (cwd, ...args) =>
  new Promise((res, rej) =>
    execFile('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd }, (e, out) => (e ? rej(e) : res(out.trim()))),
  );
async function homeBefore(host, bundle, base) {
  await gitAsync(host, 'check-ref-format', 'refs/heads/main');
  await gitAsync(host, 'rev-parse', '--verify', '--quiet', `${base}^{commit}`);
  await gitAsync(host, 'bundle', 'verify', '--quiet', bundle);
  await gitAsync(host, 'bundle', 'list-heads', bundle);
  await gitAsync(host, 'rev-parse', '--path-format=absolute', '--git-path', 'objects');
  const q = mkdtempSync(join(dir, 'q-'));
  await gitAsync(q, 'init', '-q', '--bare', '--template=', q);
  mkdirSync(join(q, 'objects', 'info'), { recursive: true });
  writeFileSync(join(q, 'objects', 'info', 'alternates'), `${join(host, '.git', 'objects')}\n`);
  await gitAsync(q, '-c', 'fetch.fsckObjects=true', 'fetch', '-q', '--no-tags', bundle, 'HEAD:refs/chalk/q');
  const qtip = await gitAsync(q, 'rev-parse', '--verify', 'refs/chalk/q');
  await gitAsync(q, 'merge-base', '--is-ancestor', base, qtip);
  await gitAsync(host, 'symbolic-ref', '--quiet', '--short', 'HEAD');
  await gitAsync(host, 'rev-parse', '--verify', 'HEAD');
  await gitAsync(host, '-c', 'fetch.fsckObjects=true', 'fetch', '-q', '--no-tags', bundle, 'HEAD:refs/chalk/in');
  const tip = await gitAsync(host, 'rev-parse', '--verify', 'refs/chalk/in');
  await gitAsync(host, 'merge-base', '--is-ancestor', base, tip);
  // The guard's reads then: the changed paths, the spec before and after, core.hooksPath.
  await Promise.all([
    gitAsync(host, 'diff', '--name-only', '-z', '--no-renames', base, tip, '--'),
    fileAt(host, { rev: base, path: SPEC }),
    fileAt(host, { rev: tip, path: SPEC }),
    configGet(host, 'core.hooksPath'),
  ]);
  await gitAsync(host, 'merge', '--ff-only', '-q', '--no-stat', tip);
  await gitAsync(host, 'rev-parse', '--verify', 'HEAD');
  await gitAsync(host, 'update-ref', '-d', 'refs/chalk/in');
  rmSync(q, { recursive: true, force: true });
}
const plainHome = [];
const checkedHome = [];
try {
  const setup = spawnSync(
    'docker',
    [
      'exec',
      name,
      'bash',
      '-c',
      'git config --global --add safe.directory "*" && git config --global user.email b@b && git config --global user.name b && git clone -q --shared --branch main /src.git /work/repo',
    ],
    { encoding: 'utf8' },
  );
  if (setup.status !== 0) throw new Error(`bare container setup: ${setup.stderr}`);
  for (let k = 1; k <= LOOPS; k++) {
    exec(`mkdir -p out && echo ok > out/${k}.txt`); // the agent's part, untimed
    const baseRev = exec('git rev-parse HEAD');
    const a = now();
    exec('GIT_INDEX_FILE=.git/fp-index git add -A && GIT_INDEX_FILE=.git/fp-index git write-tree'); // tree id
    exec(`git add -A && git commit -q -m 'loop ${k}'`); // commit
    exec(`git bundle create -q /chalk/out.bundle ${baseRev}..HEAD`); // bundle
    git(bareHost, 'fetch', '-q', join(io, 'out.bundle'), 'HEAD'); // home: fetch
    git(bareHost, 'merge', '-q', '--ff-only', 'FETCH_HEAD'); // home: fast-forward
    bare.push(now() - a);
    // Both homecomings of the same bundle, in turns so neither always goes first.
    const copy = join(dir, `home-${k}.bundle`);
    copyFileSync(join(io, 'out.bundle'), copy);
    const base = git(checkedHost, 'rev-parse', 'HEAD');
    const timeBefore = async () => {
      const t = now();
      await homeBefore(plainHost, copy, base);
      plainHome.push(now() - t);
    };
    const timeNow = async () => {
      const t = now();
      await importBundle({
        cwd: checkedHost,
        bundle: copy,
        base,
        target: { kind: 'fast-forward', branch: 'main' },
        inspect: guardNow(checkedHost),
      });
      checkedHome.push(now() - t);
    };
    for (const step of k % 2 === 0 ? [timeBefore, timeNow] : [timeNow, timeBefore]) await step();
    exec(`mkdir -p out && echo ok > out/api-${k}.txt`);
    const baseApi = exec('git rev-parse HEAD');
    const b = now();
    await apiExec('GIT_INDEX_FILE=.git/fp-index git add -A && GIT_INDEX_FILE=.git/fp-index git write-tree');
    await apiExec(`git add -A && git commit -q -m 'api loop ${k}'`);
    await apiExec(`git bundle create -q /chalk/out.bundle ${baseApi}..HEAD`);
    git(bareHost, 'fetch', '-q', join(io, 'out.bundle'), 'HEAD');
    git(bareHost, 'merge', '-q', '--ff-only', 'FETCH_HEAD');
    bareApi.push(now() - b);
    for (const host of [checkedHost, plainHost]) {
      git(host, 'fetch', '-q', join(io, 'out.bundle'), 'HEAD'); // untimed: keeps its history whole
      git(host, 'merge', '-q', '--ff-only', 'FETCH_HEAD');
    }
  }
} finally {
  spawnSync('docker', ['rm', '-f', name]);
}

const ownMs = median(own);
const bareMs = median(bare);
const ratio = ownMs / bareMs;
const bareApiMs = median(bareApi);
console.log(`chalk run with ${LOOPS} loops (scripted model): ${fmt(total)} in all`);
console.log(`  agent call per loop (median):        ${fmt(agentMs)}  (excluded)`);
console.log(`  rubric per loop (median):            ${fmt(rubricMs)}  (excluded)`);
console.log(`  harness's own time per loop (median): ${fmt(ownMs)}  [${own.map((x) => x.toFixed(0)).join(', ')}]`);
console.log(`    of which sandbox calls per loop (mean): ${breakdown.join(', ')}`);
const meanOf = (xs) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : 0);
console.log(
  `    reaping per loop: ${fmt(meanOf(reapBeforeCall) + reapsBetween.reduce((sum, [a, b]) => sum + (b - a), 0) / gaps)} in all (mean), ${fmt(meanOf(reapBeforeCall))} of it opening the agent call; each round ${fmt(median(reaps.map(([a, b]) => b - a)))} (median of ${reaps.length}), ${(reaps.length / agentCalls.length).toFixed(1)} rounds a loop`,
);
console.log(
  `bare docker exec + git steps per loop (median): ${fmt(bareMs)}  [${bare.map((x) => x.toFixed(0)).join(', ')}]`,
);
console.log(
  `  the same steps through the Engine API (median): ${fmt(bareApiMs)}  [${bareApi.map((x) => x.toFixed(0)).join(', ')}]`,
);
console.log(
  `ratio: ${ratio.toFixed(2)}x to the docker CLI steps (target at most 1.5x) ${ratio <= 1.5 ? 'OK' : 'OVER'}`,
);
console.log(`ratio: ${(ownMs / bareApiMs).toFixed(2)}x to the Engine API steps (stricter)`);
// The median of the paired differences: each loop's two homecomings ran back to back.
const added = median(checkedHome.map((x, i) => x - plainHome[i]));
console.log(
  `homecoming on the host per loop (median): its git calls before the caps ${fmt(median(plainHome))}, importBundle now ${fmt(median(checkedHome))}: +${fmt(added)} (target at most 60 ms) ${added <= 60 ? 'OK' : 'OVER'}  [${checkedHome.map((x, i) => (x - plainHome[i]).toFixed(0)).join(', ')}]`,
);
