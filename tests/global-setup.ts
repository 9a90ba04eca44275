import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The CLI tests run the built `chalk`; build once before the suite. Type errors
 * are the typecheck step's to report (tsc still emits), so only a missing
 * entry point stops the suite here.
 */
export default function setup() {
  const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { encoding: 'utf8' });
  if (r.status !== 0) process.stderr.write(`tsc reported errors while building dist/:\n${r.stdout}${r.stderr}\n`);
  for (const entry of ['chalk.cjs', 'main.js'])
    if (!existsSync(join(import.meta.dirname, '..', 'dist', 'cli', entry)))
      throw new Error(`the build made no dist/cli/${entry}`);
}
