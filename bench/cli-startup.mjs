#!/usr/bin/env node
// Start-up time of `chalk version` and `chalk config`, as a ratio to `node -e 0`
// measured in the same run (target: at most 3x). Run after `npm run build`:
//   node bench/cli-startup.mjs [runs]
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const runs = Number(process.argv[2] ?? 30);
const bin = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const cwd = mkdtempSync(join(tmpdir(), 'chalk-bench-'));
spawnSync('git', ['init', '-q'], { cwd });

function median(cmd) {
  const times = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, cmd, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (i >= 3) times.push(ms); // the first runs warm the file cache
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// Interleave the measurements so machine load affects all three alike.
const base = median(['-e', '0']);
const version = median([bin, 'version']);
const config = median([bin, 'config']);
const base2 = median(['-e', '0']);
const baseline = (base + base2) / 2;
const row = (name, ms) => `${name.padEnd(16)} ${ms.toFixed(1).padStart(7)} ms  ${(ms / baseline).toFixed(2)}x`;
console.log(`median of ${runs} runs each`);
console.log(row('node -e 0', baseline));
console.log(row('chalk version', version));
console.log(row('chalk config', config));
const worst = Math.max(version, config) / baseline;
console.log(`target <= 3.00x: ${worst <= 3 ? 'met' : 'NOT met'} (${worst.toFixed(2)}x)`);
