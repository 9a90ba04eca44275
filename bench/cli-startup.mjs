#!/usr/bin/env node
// Start-up time of `chalk version`, `chalk status` and `chalk config` in a repository, as a
// ratio to `node -e 0` measured in the same run (targets: version at most 1.1x, status at most
// 2x, config at most 3x). Run after `npm run build`:
//   node bench/cli-startup.mjs [runs]
// The repository has a .chalk/config as `chalk init` writes one, three tickets with run
// directories, rows in the embedded database (its own, under a temporary XDG_STATE_HOME,
// started before the timing and stopped at the end) and a detention branch, so status reads
// everything it reads in use. Every round runs each command once, in turn, so machine load
// affects all alike; a command's ratio is the median of its times over node's.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const runs = Number(process.argv[2] ?? 30);
const dist = join(import.meta.dirname, '..', 'dist');
const bin = join(dist, 'cli', 'chalk.cjs');
const root = mkdtempSync(join(tmpdir(), 'chalk-bench-cli-'));
const repo = join(root, 'shop');
const env = { ...process.env, XDG_STATE_HOME: join(root, 'state'), CHALK_DATABASE_URL: '', CHALK_PLUGINS: '' };

const sh = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
};
const chalk = (...args) => sh(process.execPath, [bin, ...args]);

try {
  mkdirSync(repo);
  sh('git', ['init', '-q', '-b', 'main']);
  mkdirSync(join(repo, '.chalk'));
  writeFileSync(
    join(repo, '.chalk', 'config'),
    '# as chalk init writes it\nCHALK_TEST_CMD=npm test\nCHALK_SETUP_CMD=npm ci\n',
  );
  sh('git', ['add', '.']);
  sh('git', ['-c', 'user.name=b', '-c', 'user.email=b@e', 'commit', '-q', '-m', 'init']);
  sh('git', ['branch', 'detention/SHOP-2-1700000000']);

  // The rows, through the store as a run writes them (this starts the embedded server).
  const [{ PgStore }, { loadConfig }, { repoName }, { runPaths }, { runRecord }, { countsOf, LoopState }] =
    await Promise.all([
      import(join(dist, 'core', 'store', 'index.js')),
      import(join(dist, 'core', 'config', 'config.js')),
      import(join(dist, 'core', 'repo', 'git.js')),
      import(join(dist, 'core', 'layout.js')),
      import(join(dist, 'core', 'run', 'resume', 'resume.js')),
      import(join(dist, 'core', 'run', 'base', 'policy.js')),
    ]);
  const key = await repoName(repo);
  const store = await PgStore.forConfig(loadConfig({ root: repo, env }), env);
  try {
    for (const [ticket, kind, cost] of [
      ['SHOP-1', 'continue', 0.5],
      ['SHOP-1', 'review', 0.25],
      ['SHOP-2', 'continue', 1],
      ['SHOP-3', 'continue', 0.1],
    ]) {
      await store.calls.record({
        repo: key,
        ticket,
        branch: ticket,
        loop: 1,
        kind,
        agentStatus: kind === 'review' ? 'pass' : 'ok',
        rubricExit: 0,
        progressed: true,
        model: 'm',
        prompts: 'p',
        costUsd: cost,
        budgetUsd: 1,
        durationS: 1,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        turns: 1,
        denials: 0,
        lessons: 0,
      });
    }
    await store.events.record(key, 'SHOP-1', 'submitted');
    await store.events.record(key, 'SHOP-2', 'detention');
  } finally {
    await store.close();
  }
  // Run directories, each with the record of a run that ended, as a run leaves them.
  for (const ticket of ['SHOP-1', 'SHOP-2', 'SHOP-3']) {
    const paths = runPaths(key, ticket, env);
    mkdirSync(paths.dir, { recursive: true });
    const at = new Date();
    const record = runRecord({
      runId: `${ticket}-1`,
      startedAt: at,
      now: at,
      counts: countsOf(new LoopState()),
      ended: 'detained',
    });
    writeFileSync(paths.record, `${JSON.stringify(record)}\n`);
  }
  const shown = chalk('status');
  if (!/SHOP-2\s+detained\s+1\s+\$1\.00\s+0\s+1/.test(shown)) throw new Error(`chalk status printed:\n${shown}`);

  const commands = {
    'node -e 0': ['-e', '0'],
    'chalk version': [bin, 'version'],
    'chalk status': [bin, 'status'],
    'chalk config': [bin, 'config'],
  };
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = 0; i < runs + 3; i++) {
    for (const [name, args] of Object.entries(commands)) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, args, { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) throw new Error(`${name} exited ${r.status}: ${r.stderr}`);
      if (i >= 3) times[name].push(ms); // the first rounds warm the file cache
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(times['node -e 0']);
  const targets = { 'chalk version': 1.1, 'chalk status': 2, 'chalk config': 3 };
  console.log(
    `median of ${runs} rounds; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let met = true;
  for (const name of Object.keys(commands)) {
    const ms = median(times[name]);
    const ratio = ms / base;
    const target = targets[name];
    const verdict =
      target === undefined ? '' : `  target <= ${target.toFixed(2)}x: ${ratio <= target ? 'met' : 'NOT met'}`;
    if (target !== undefined && ratio > target) met = false;
    console.log(`${name.padEnd(14)} ${ms.toFixed(1).padStart(7)} ms  ${ratio.toFixed(2)}x${verdict}`);
  }
  console.log(met ? 'every target met' : 'a target is NOT met');
} finally {
  spawnSync(process.execPath, [bin, 'db', 'down'], { cwd: repo, env, stdio: 'ignore' });
  rmSync(root, { recursive: true, force: true });
}
