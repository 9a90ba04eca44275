#!/usr/bin/env node
// The run loop's own time per loop: everything a loop does except the agent
// call and the rubric (prompt, fingerprint, commit, bringing the work home,
// the runs row, verdict, hooks), measured on a real `chalk run` in-process with
// the scripted model, against the bare docker and git steps a loop needs
// (tree id, commit, bundle in the container; fetch and fast-forward on the
// host), timed in the same run on a container of the same image.
// Target: at most 1.5x. Run after `npm run build`, with Docker and the image:
//   node bench/loop.mjs [loops]
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
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
const { depsFromKernel } = await import(join(dist, 'core', 'run', 'deps.js'));
const { runTicket } = await import(join(dist, 'core', 'run', 'run-ticket.js'));
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
// one, less its rubric run (the next loop's prompt building included).
const own = [];
for (let k = 0; k + 1 < agentCalls.length; k++) {
  const [, end] = agentCalls[k];
  const [next] = agentCalls[k + 1];
  const rubric = rubricRuns.filter(([a, b]) => a >= end && b <= next).reduce((sum, [a, b]) => sum + (b - a), 0);
  own.push(next - end - rubric);
}
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
    exec(`mkdir -p out && echo ok > out/api-${k}.txt`);
    const baseApi = exec('git rev-parse HEAD');
    const b = now();
    await apiExec('GIT_INDEX_FILE=.git/fp-index git add -A && GIT_INDEX_FILE=.git/fp-index git write-tree');
    await apiExec(`git add -A && git commit -q -m 'api loop ${k}'`);
    await apiExec(`git bundle create -q /chalk/out.bundle ${baseApi}..HEAD`);
    git(bareHost, 'fetch', '-q', join(io, 'out.bundle'), 'HEAD');
    git(bareHost, 'merge', '-q', '--ff-only', 'FETCH_HEAD');
    bareApi.push(now() - b);
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
