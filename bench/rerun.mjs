#!/usr/bin/env node
// The flaky rerun on a vitest project: the selective rerun (only the failing tests' files, the
// command core/fingerprint/rerun.ts builds from the first run's output) against the full rubric,
// measured in one run, alternated, and the ratio. Run after `npm run build`:
//   node bench/rerun.mjs [files] [runs]            a generated project
//   node bench/rerun.mjs --dir DIR --cmd 'CMD' [runs]  a real one (its dependencies installed, a test failing)
// The generated project has `files` test files (default 40) of 5 tests each, every test about
// 40 ms of work (hashing), and one test that fails; it uses Chalk's own vitest (node_modules
// linked in) and is removed at the end. The target is a ratio of at most 0.30.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist', 'core', 'fingerprint');
const { selectiveRerun } = await import(join(dist, 'rerun.js'));
const { failingTests } = await import(join(dist, 'fingerprint.js'));

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? null : (args.splice(i, 2)[1] ?? null);
};
const givenDir = flag('--dir');
const givenCmd = flag('--cmd');
const files = Number(givenDir ? 0 : (args.shift() ?? 40));
const runs = Number(args.shift() ?? 3);

function generate() {
  const dir = mkdtempSync(join(tmpdir(), 'chalk-bench-rerun-'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{ "name": "bench-rerun", "private": true, "type": "module" }\n');
  writeFileSync(join(dir, 'vitest.config.mjs'), 'export default { test: { include: ["test/**/*.test.mjs"] } };\n');
  mkdirSync(join(dir, 'test'));
  writeFileSync(
    join(dir, 'test', 'work.mjs'),
    `import { createHash } from 'node:crypto';
/** About \`ms\` of hashing, the same every run. */
export function work(ms) {
  const end = performance.now() + ms;
  let h = 'seed';
  while (performance.now() < end) h = createHash('sha256').update(h).digest('hex');
  return h.length;
}
`,
  );
  for (let f = 0; f < files; f++) {
    const tests = Array.from(
      { length: 5 },
      (_, t) =>
        `  it('computes case ${t}', () => { expect(work(40)).toBe(64); ${f === 7 && t === 3 ? "expect('flaky').toBe('steady');" : ''} });`,
    ).join('\n');
    writeFileSync(
      join(dir, 'test', `mod${f}.test.mjs`),
      `import { describe, expect, it } from 'vitest';\nimport { work } from './work.mjs';\n\ndescribe('mod${f}', () => {\n${tests}\n});\n`,
    );
  }
  return dir;
}

const dir = givenDir ?? generate();
const full = givenCmd ?? 'npx vitest run';
const sh = (command) => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', command], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', CI: 'true' },
    maxBuffer: 256 * 1024 * 1024,
  });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, code: r.status, log: `${r.stdout}${r.stderr}` };
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;

try {
  const first = sh(full);
  const ids = failingTests(first.log, null);
  if (first.code === 0 || ids === null)
    throw new Error(`the full rubric must fail naming tests:\n${first.log.slice(-2000)}`);
  const selective = selectiveRerun(full, { log: first.log, ids, report: false });
  if (!selective) throw new Error(`no selective rerun for ${full} and ${ids.join(', ')}`);
  console.log(`failing: ${ids.join(', ')}`);
  console.log(`full:      ${full}`);
  console.log(`selective: ${selective.command}`);
  const times = { full: [], selective: [] };
  for (let i = 0; i < runs; i++) {
    for (const [name, cmd] of i % 2 === 0
      ? [
          ['full', full],
          ['selective', selective.command],
        ]
      : [
          ['selective', selective.command],
          ['full', full],
        ]) {
      const r = sh(cmd);
      // The rerun must still run (and fail) the failing tests, and only ever fewer than the whole.
      const again = failingTests(r.log, null) ?? [];
      if (!ids.every((id) => again.includes(id)))
        throw new Error(`${name} did not run ${ids.join(', ')}:\n${r.log.slice(-2000)}`);
      times[name].push(r.ms);
    }
  }
  const f = median(times.full);
  const s = median(times.selective);
  console.log(`full rubric   median ${fmt(f)} (${times.full.map(fmt).join(', ')})`);
  console.log(`selective     median ${fmt(s)} (${times.selective.map(fmt).join(', ')})`);
  console.log(`ratio selective/full: ${(s / f).toFixed(2)} (target at most 0.30)`);
} finally {
  if (!givenDir) rmSync(dir, { recursive: true, force: true });
}
