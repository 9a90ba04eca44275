import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
export const EXAMPLE_DIR = join(ROOT, 'examples', 'forge-plugin');

/**
 * Builds an example under examples/ (forge-plugin by default, or decider-plugin) the way its
 * author would after `npm install` (`strict`, `skipLibCheck: false`):
 * a copy whose node_modules links `chalk-harness` to this package (so its
 * `exports` map and the declarations in dist/ are what tsc resolves), and zod
 * and @types/node to the ones installed here; compiled with tsc. Returns the
 * copy's directory, whose dist/index.js is the plugin. Needs `npm run build` first.
 */
export function buildExamplePlugin(example = 'forge-plugin'): {
  dir: string;
  entry: string;
  tsc: { code: number; output: string };
} {
  if (!existsSync(join(ROOT, 'dist', 'core', 'plugin.d.ts'))) {
    throw new Error('dist/core/plugin.d.ts is missing: run npm run build (declaration: true) first');
  }
  const dir = join(tempDir('chalk-example-plugin-'), example);
  mkdirSync(dir);
  for (const f of ['package.json', 'tsconfig.json', 'src'])
    cpSync(join(ROOT, 'examples', example, f), join(dir, f), { recursive: true });
  const nm = join(dir, 'node_modules');
  mkdirSync(join(nm, '@types'), { recursive: true });
  symlinkSync(ROOT, join(nm, 'chalk-harness'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', 'zod'), join(nm, 'zod'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(nm, '@types', 'node'), 'dir');
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], {
    encoding: 'utf8',
  });
  return { dir, entry: join(dir, 'dist', 'index.js'), tsc: { code: r.status ?? -1, output: `${r.stdout}${r.stderr}` } };
}
