#!/usr/bin/env node
// Time to fingerprint a 50 MB rubric log (read it, then T and E as the loop does) against
// `grep -c` over the same file, measured in the same run, and the ratio (target: at most 20x).
// Run after `npm run build`:
//   node bench/fingerprint.mjs [MB] [runs]
// The log is pytest-like (`-v`, colour codes included; core/testing/pytest-log.ts), generated
// into a temporary directory and removed at the end. It is read as bytes, as the loop has a
// rubric's output (RubricRun.log: the bytes the sandbox's exec handed over).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const mb = Number(process.argv[2] ?? 50);
const runs = Number(process.argv[3] ?? 7);
const TARGET = 20;
const dist = join(import.meta.dirname, '..', 'dist', 'core');
const { fingerprintFailure } = await import(join(dist, 'fingerprint', 'index.js'));
const { pytestLog } = await import(join(dist, 'testing', 'pytest-log.js'));

const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-fp-'));
const file = join(dir, 'rubric.log');
try {
  // Generated in a function of its own, so the generator's strings are garbage before the timing.
  const { tests, failing } = (() => {
    const log = pytestLog(mb, dir);
    writeFileSync(file, log.text);
    return { tests: log.tests, failing: log.failing };
  })();
  const bytes = statSync(file).size;

  const time = (fn) => {
    const t0 = process.hrtime.bigint();
    const out = fn();
    return { ms: Number(process.hrtime.bigint() - t0) / 1e6, out };
  };
  const fingerprint = () => fingerprintFailure({ log: readFileSync(file), report: null, treeId: 'a'.repeat(40) });
  const grep = () => {
    const r = spawnSync('grep', ['-c', 'FAILED', file], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`grep -c exited ${r.status}: ${r.stderr}`);
    return Number(r.stdout.trim());
  };
  // One warm-up each (the file cache, the JIT), then alternate so machine load affects both alike.
  fingerprint();
  grep();
  const fpMs = [];
  const grepMs = [];
  const ratios = [];
  let fp;
  let count = 0;
  for (let i = 0; i < runs; i++) {
    const a = time(fingerprint);
    fp = a.out;
    const b = time(grep);
    count = b.out;
    fpMs.push(a.ms);
    grepMs.push(b.ms);
    ratios.push(a.ms / b.ms);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  if (fp.failing !== failing)
    throw new Error(`the fingerprint read ${fp.failing} failing tests, the log has ${failing}`);
  const ratio = median(ratios);
  console.log(
    `log: ${(bytes / 1024 / 1024).toFixed(1)} MB, ${tests} tests, ${failing} failing (grep -c FAILED: ${count} lines)`,
  );
  console.log(`first error: ${fp.firstError}`);
  console.log(
    `median of ${runs} runs each; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`fingerprint (read + T + E)  ${median(fpMs).toFixed(0).padStart(7)} ms`);
  console.log(`grep -c FAILED              ${median(grepMs).toFixed(0).padStart(7)} ms`);
  console.log(`ratio (median of each run's) ${ratio.toFixed(1).padStart(6)}x`);
  console.log(`target <= ${TARGET}x: ${ratio <= TARGET ? 'met' : 'NOT met'}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
