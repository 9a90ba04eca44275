import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The CLI tests run the built `chalk`; build once before the suite, as `npm run build` does
 * (tsc, then the bundle `chalk status` runs from: scripts/bundle-light.mjs). Type errors
 * are the typecheck step's to report (tsc still emits), so only a missing
 * entry point stops the suite here.
 */
export default function setup() {
  const r = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { encoding: 'utf8' });
  if (r.status !== 0) process.stderr.write(`tsc reported errors while building dist/:\n${r.stdout}${r.stderr}\n`);
  const bundle = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'bundle-light.mjs')], {
    encoding: 'utf8',
  });
  if (bundle.status !== 0) throw new Error(`the bundle of chalk status was not made:\n${bundle.stderr}`);
  for (const entry of ['chalk.cjs', 'main.js', 'light.cjs'])
    if (!existsSync(join(import.meta.dirname, '..', 'dist', 'cli', entry)))
      throw new Error(`the build made no dist/cli/${entry}`);
}
