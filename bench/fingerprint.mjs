#!/usr/bin/env node
// Time to fingerprint a 50 MB rubric log (read it, then T and E as the loop does)
// against `grep -c` over the same file, in one run, and the ratio. Run after `npm run build`:
//   node bench/fingerprint.mjs [MB] [runs]
// The log is pytest-like (`-v`, colour codes included): progress lines, then a FAILURES
// section with one traceback per failing test, then the short summary; about one test in
// five fails. It is generated into a temporary directory, removed at the end.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mb = Number(process.argv[2] ?? 50);
const runs = Number(process.argv[3] ?? 5);
const { fingerprintFailure } = await import(join(import.meta.dirname, '..', 'dist', 'core', 'fingerprint', 'index.js'));

const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-fp-'));
const file = join(dir, 'rubric.log');
try {
  // Tests in files of 50; test i fails when i % 5 == 3.
  const target = mb * 1024 * 1024;
  const progress = [];
  const failures = [];
  const summary = [];
  let size = 0;
  for (let i = 0; size < target; i++) {
    const id = `tests/test_mod_${Math.floor(i / 50)}.py::test_case_${i}`;
    const fails = i % 5 === 3;
    const line = `${id} \u001b[31m${fails ? 'FAILED' : '\u001b[32mPASSED'}\u001b[0m ${' '.repeat(20)}[ ${i % 100}%]\n`;
    progress.push(line);
    size += line.length;
    if (!fails) continue;
    const block =
      `\u001b[1m\u001b[31m_______________________________ test_case_${i} ________________________________\u001b[0m\n\n` +
      `    def test_case_${i}():\n        value = compute(${i})\n>       assert value == ${i + 1}\n` +
      `\u001b[1m\u001b[31mE       assert ${i} == ${i + 1}\u001b[0m\n\u001b[1m\u001b[31mE        +  where ${i} = compute(${i})\u001b[0m\n\n` +
      `tests/test_mod_${Math.floor(i / 50)}.py:${10 + (i % 50) * 4}: AssertionError\n`;
    failures.push(block);
    const s = `FAILED ${id} - assert ${i} == ${i + 1}\n`;
    summary.push(s);
    size += block.length + s.length;
  }
  const head = `============================= test session starts ==============================\nplatform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0\nrootdir: ${dir}\ncollected ${progress.length} items\n\n`;
  const body = `${head}${progress.join('')}\n=================================== FAILURES ===================================\n${failures.join('')}=========================== short test summary info ============================\n${summary.join('')}======================= ${summary.length} failed, ${progress.length - summary.length} passed in 123.45s =======================\n`;
  writeFileSync(file, body);
  const bytes = statSync(file).size;

  const time = (fn) => {
    const t0 = process.hrtime.bigint();
    const out = fn();
    return { ms: Number(process.hrtime.bigint() - t0) / 1e6, out };
  };
  const fingerprint = () =>
    fingerprintFailure({ log: readFileSync(file, 'utf8'), report: null, treeId: 'a'.repeat(40) });
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
  let fp;
  let count = 0;
  for (let i = 0; i < runs; i++) {
    const a = time(fingerprint);
    fpMs.push(a.ms);
    fp = a.out;
    const b = time(grep);
    grepMs.push(b.ms);
    count = b.out;
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const f = median(fpMs);
  const g = median(grepMs);
  if (fp.failing !== summary.length)
    throw new Error(`the fingerprint read ${fp.failing} failing tests, the log has ${summary.length}`);
  console.log(
    `log: ${(bytes / 1024 / 1024).toFixed(1)} MB, ${progress.length} tests, ${summary.length} failing (grep -c FAILED: ${count} lines)`,
  );
  console.log(`first error: ${fp.firstError}`);
  console.log(`median of ${runs} runs each`);
  console.log(`fingerprint (read + T + E)  ${f.toFixed(0).padStart(7)} ms`);
  console.log(`grep -c FAILED              ${g.toFixed(0).padStart(7)} ms`);
  console.log(`ratio                       ${(f / g).toFixed(1).padStart(7)}x`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
