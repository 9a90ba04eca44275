#!/usr/bin/env node
// A three-workstream fleet end to end (the real CLI, a detached supervisor, real `chalk run`s
// in real sandboxes, the real `claude` CLI against the scripted model, each loop answering
// after the same fixed delay), timed at CHALK_MAX_PARALLEL=1 and =2 in the same run, and the
// scheduler's own time: a slot freed (a run ended) -> the supervisor started the next run, and
// -> that run's sandbox started (docker's own `start` event).
// Run after `npm run build`, with Docker and the image:
//   node bench/fleet.mjs [model delay ms, default 3000]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DELAY = Number(process.argv[2] ?? 3000);
const dist = join(import.meta.dirname, '..', 'dist');
const bin = join(dist, 'cli', 'main.js');
const IMAGE = process.env.CHALK_IMAGE || 'chalk-sandbox:local';
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const { startModelServer } = await import(join(dist, 'demo', 'model-server.js'));
const { promptOf } = await import(join(dist, 'demo', 'call-kind.js'));
const s = await import(join(dist, 'demo', 'model-script.js'));
const { fleetPaths } = await import(join(dist, 'core', 'layout.js'));
const { repoKey } = await import(join(dist, 'core', 'repo', 'git.js'));

const model = await startModelServer({
  pick: (req) => {
    const ticket = /specs\/([A-Z]+-[0-9]+)\.md/.exec(promptOf(req))?.[1] ?? 'X-1';
    const name = ticket.toLowerCase().replace('-', '_');
    return [
      s.bash(`mkdir -p out && echo ok > out/${name}.txt && sed -i '0,/- \\[ \\]/s//- [x]/' specs/${ticket}.md`, {
        sleepMs: DELAY,
      }),
      s.loopDone('1', `wrote out/${name}.txt`),
    ];
  },
});
const state = mkdtempSync(join(tmpdir(), 'chalk-bench-fleet-state-'));

/** A repository on main with a bare origin. */
function repository(tag) {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-fleet-'));
  const root = join(dir, `fleet${tag}${process.pid}`);
  mkdirSync(root);
  git(dir, 'init', '-q', '--bare', '-b', 'main', join(dir, 'origin.git'));
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Bench');
  git(root, 'config', 'user.email', 'bench@example.com');
  writeFileSync(
    join(root, 'check.sh'),
    'for f in out/*.txt; do [ -e "$f" ] || continue; grep -q ok "$f" || exit 1; done\n',
  );
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
  git(root, 'remote', 'add', 'origin', join(dir, 'origin.git'));
  git(root, 'push', '-q', 'origin', 'main');
  return { dir, root };
}

/** Docker `start` events of one repository's sandboxes: ticket -> epoch ms. */
function watchStarts(repo) {
  const starts = new Map();
  const p = spawn('docker', [
    'events',
    '--filter',
    'type=container',
    '--filter',
    'event=start',
    '--filter',
    `label=chalk.repo=${repo}`,
    '--format',
    '{{.TimeNano}} {{index .Actor.Attributes "chalk.ticket"}}',
  ]);
  p.stdout.setEncoding('utf8').on('data', (d) => {
    for (const line of d.split('\n').filter(Boolean)) {
      const [ns, ticket] = line.split(' ');
      if (!starts.has(ticket)) starts.set(ticket, Number(BigInt(ns) / 1_000_000n));
    }
  });
  return { starts, stop: () => p.kill() };
}

async function fleet(parallel) {
  const epic = `BENCH-${parallel}0`;
  const tickets = [1, 2, 3].map((i) => `BENCH-${parallel}${i}`);
  const { dir, root } = repository(parallel);
  const plan = join(dir, 'plan.json');
  writeFileSync(
    plan,
    JSON.stringify({
      workstreams: tickets.map((t) => ({ ticket: t, title: `Write ${t}`, checkpoints: [`out says ok for ${t}`] })),
    }),
  );
  const repo = repoKey(root);
  const events = watchStarts(repo);
  const env = {
    ...process.env,
    XDG_STATE_HOME: state,
    NO_COLOR: '1',
    ANTHROPIC_API_KEY: 'sk-ant-bench-dummy',
    ANTHROPIC_BASE_URL: model.url,
    CHALK_PERMISSION_MODE: 'bypass',
    CHALK_IMAGE: IMAGE,
    CHALK_TEST_CMD: 'sh check.sh',
    CHALK_FORGE: 'none',
    CHALK_SPEC_CHECK: 'false',
    CHALK_REVIEW: 'false',
    CHALK_DECIDER: 'off',
    CHALK_DISTILL: 'false',
    CHALK_MAX_PARALLEL: String(parallel),
    ...(process.env.CHALK_TEST_PG_URL && !process.env.CHALK_DATABASE_URL
      ? { CHALK_DATABASE_URL: process.env.CHALK_TEST_PG_URL }
      : {}),
  };
  await new Promise((r) => setTimeout(r, 500)); // docker events is listening
  const t0 = Date.now();
  const child = spawn(process.execPath, [bin, 'fleet', epic, '--plan', plan, '--yes'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const code = await new Promise((r) => child.once('exit', r));
  const wall = Date.now() - t0;
  events.stop();
  if (code !== 0) throw new Error(`chalk fleet exited ${code}:\n${out}`);
  const status = JSON.parse(readFileSync(fleetPaths(repo, epic, { XDG_STATE_HOME: state }).status, 'utf8'));
  const bad = status.workstreams.filter((w) => w.state !== 'ready' && w.state !== 'submitted');
  if (bad.length > 0) throw new Error(`not finished: ${JSON.stringify(bad)}`);
  // Each run that started after another ended: the slot it took was freed by the latest end before it.
  const ms = (iso) => Date.parse(iso);
  const gaps = [];
  for (const w of status.workstreams) {
    const freed = status.workstreams
      .map((o) => (o.endedAt ? ms(o.endedAt) : null))
      .filter((e) => e !== null && e <= ms(w.startedAt))
      .sort((a, b) => b - a)[0];
    if (freed === undefined) continue;
    gaps.push({
      ticket: w.ticket,
      toStart: ms(w.startedAt) - freed,
      toSandbox: (events.starts.get(w.ticket) ?? NaN) - freed,
    });
  }
  return { wall, gaps };
}

const one = await fleet(1);
const two = await fleet(2);
await model.close();
const f = (n) => `${(n / 1000).toFixed(1)} s`;
console.log(`three workstreams, one loop each, the model answering after ${DELAY} ms`);
console.log(`CHALK_MAX_PARALLEL=1  wall ${f(one.wall)}`);
console.log(`CHALK_MAX_PARALLEL=2  wall ${f(two.wall)}  (${(two.wall / one.wall).toFixed(2)}x of parallel 1)`);
for (const g of [...one.gaps, ...two.gaps])
  console.log(
    `slot freed -> ${g.ticket}: supervisor started it after ${g.toStart} ms, its sandbox started after ${g.toSandbox} ms`,
  );
const starts = [...one.gaps, ...two.gaps].map((g) => g.toStart).sort((a, b) => a - b);
console.log(
  `scheduler's own time (slot freed -> next run started): median ${starts[Math.floor(starts.length / 2)]} ms`,
);
