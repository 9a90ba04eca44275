#!/usr/bin/env node
// The setup cache against the full-cost baseline, in one run, with the real CLI as a user
// runs it (`chalk run`, the real sandbox and claude CLI, the scripted model). A repository
// whose setup takes SETUP_S seconds (default 20) and leaves a node_modules of 4,000 small
// files and a home cache (about 40 MB): ticket 1 runs the setup and saves what it left;
// then, ROUNDS times (default 1), a ticket with the cache (restored, the setup not run)
// and a ticket with CHALK_SETUP_CACHE=false (what every ticket paid before), alternating.
// Prints each wall time and the ratios; the target is restored / first <= 0.7.
// Run after `npm run build`, with Docker and the image:
//   node bench/setup-cache.mjs [rounds] [setup-seconds]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROUNDS = Math.max(1, Number(process.argv[2] ?? 1));
const SETUP_S = Math.max(1, Number(process.argv[3] ?? 20));
const dist = join(import.meta.dirname, '..', 'dist');
const CHALK = join(dist, 'cli', 'main.js');
const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

// --- the repository: a setup that takes SETUP_S seconds however fast the machine is ----
const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-setup-'));
const root = join(dir, `setupbench${process.pid}`);
mkdirSync(root);
git(root, 'init', '-q', '-b', 'main');
git(root, 'config', 'user.name', 'Bench');
git(root, 'config', 'user.email', 'bench@example.com');
writeFileSync(join(root, '.gitignore'), 'node_modules/\n');
writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion": 3}\n');
writeFileSync(
  join(root, 'setup.sh'),
  `start=$(date +%s)
for p in $(seq 1 200); do
  mkdir -p node_modules/pkg$p/lib
  for f in $(seq 1 20); do head -c 8192 /dev/urandom > node_modules/pkg$p/lib/f$f.js; done
done
mkdir -p "$HOME/.npm/_cacache" && head -c 8000000 /dev/urandom > "$HOME/.npm/_cacache/blob"
while [ $(( $(date +%s) - start )) -lt ${SETUP_S} ]; do sleep 0.2; done
`,
);
writeFileSync(
  join(root, 'check.sh'),
  'test -d node_modules/pkg200 && for f in out/*.txt; do grep -q ok "$f" || exit 1; done\n',
);
git(root, 'add', '-A');
git(root, 'commit', '-q', '-m', 'initial');

let tickets = 0;
/** A new ticket branch from main with a one-checkpoint spec, checked out. */
function newTicket() {
  const key = `BENCH-${++tickets}`;
  git(root, 'checkout', '-q', '-b', `chalk/${key}`, 'main');
  mkdirSync(join(root, 'specs'), { recursive: true });
  writeFileSync(join(root, 'specs', `${key}.md`), `# ${key}: bench\n\n## Checkpoints\n- [ ] out/${key}.txt says ok\n`);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', `chalk(${key}): spec`);
  return key;
}

// --- the scripted model: the one loop writes its file and ticks the checkpoint --------
const { startModelServer } = await import(join(dist, 'demo', 'model-server.js'));
const m = await import(join(dist, 'demo', 'model-script.js'));
let current = '';
const model = await startModelServer({
  pick: () => [
    m.bash(`mkdir -p out && echo ok > out/${current}.txt && sed -i 's/- \\[ \\]/- [x]/' specs/${current}.md`),
    m.loopDone('1', `wrote out/${current}.txt`),
  ],
});

const state = mkdtempSync(join(tmpdir(), 'chalk-bench-setup-state-'));
const env = {
  ...process.env,
  XDG_STATE_HOME: state,
  NO_COLOR: '1',
  ANTHROPIC_API_KEY: 'sk-ant-bench-dummy',
  ANTHROPIC_BASE_URL: model.url,
  CHALK_PERMISSION_MODE: 'bypass',
  CHALK_IMAGE: IMAGE,
  CHALK_SETUP_CMD: 'sh setup.sh',
  CHALK_TEST_CMD: 'sh check.sh',
  CHALK_SPEC_CHECK: 'false',
  CHALK_REVIEW: 'false',
  CHALK_AUTO_MR: 'false',
  CHALK_DECIDER: 'off',
  CHALK_DISTILL: 'false',
};

/** `chalk ARGS` in the repository; its wall time in ms and its output, or it fails the bench. */
function chalk(args, extra = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CHALK, ...args], { cwd: root, env: { ...env, ...extra } });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve({ ms, out });
      else reject(new Error(`chalk ${args.join(' ')} exited ${code}:\n${out}`));
    });
  });
}

/** One ticket end to end; checks that the setup ran or was restored as expected. */
async function ticket(what, extra, expect) {
  current = newTicket();
  const r = await chalk(['run'], extra);
  const ran = r.out.includes('running the setup command');
  const restored = r.out.includes('setup restored from the state saved');
  if ((expect === 'restored') !== restored || (expect !== 'restored') !== ran) {
    throw new Error(`${what}: expected the setup ${expect}, got:\n${r.out}`);
  }
  const line = r.out.split('\n').find((l) => /setup (state saved|restored)/.test(l)) ?? '';
  process.stdout.write(`${what.padEnd(38)} ${s(r.ms).padStart(8)}  ${line.replace(/^\[[^\]]+\] /, '')}\n`);
  return r.ms;
}

try {
  await chalk(['db', 'up']);
  process.stdout.write(`setup command: ${SETUP_S} s, ~40 MB in ${200 * 20} files + an 8 MB home cache\n`);
  const first = await ticket('first ticket (setup, saved)', {}, 'saved');
  const cached = [];
  const baseline = [];
  for (let i = 0; i < ROUNDS; i++) {
    cached.push(await ticket('next ticket, restored', {}, 'restored'));
    baseline.push(await ticket('next ticket, CHALK_SETUP_CACHE=false', { CHALK_SETUP_CACHE: 'false' }, 'ran'));
  }
  const c = median(cached);
  const b = median(baseline);
  process.stdout.write(
    `\nrestored / first ticket: ${(c / first).toFixed(2)}x (target <= 0.70)\n` +
      `restored / no cache:     ${(c / b).toFixed(2)}x\n` +
      `first ticket - no cache: ${first >= b ? '+' : '-'}${s(Math.abs(first - b))} (the save, within the machine's noise)\n`,
  );
  if (c / first > 0.7) process.exitCode = 1;
} finally {
  await chalk(['db', 'down']).catch(() => {});
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
