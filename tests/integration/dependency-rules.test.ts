import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/**
 * The plugin boundary's rules in .dependency-cruiser.cjs (run by `npm run depcheck` in CI), on a
 * throwaway tree: a plugin that reaches a core file package.json does not publish, or another
 * plugin's file, is refused by name; one that uses the published entries passes.
 */
function cruise(files: Record<string, string>): { code: number; output: string } {
  const dir = tempDir('chalk-depcruise-');
  const all = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
    'core/plugin.ts': 'export const x = 1;\n',
    'core/layout.ts': 'export const y = 2;\n',
    'plugins/decider-http/client.ts': 'export const z = 3;\n',
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'err', 'plugins', 'core'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

describe('the plugin boundary rules', { timeout: 60_000 }, () => {
  it('refuse a plugin importing an unpublished core file or another plugin, and pass the published entry', () => {
    const bad = cruise({
      'plugins/acme/index.ts': [
        "import { x } from '../../core/plugin.js';",
        "import { y } from '../../core/layout.js';",
        "import { z } from '../decider-http/client.js';",
        'export const all = [x, y, z];',
        '',
      ].join('\n'),
    });
    expect(bad.code, bad.output).not.toBe(0);
    expect(bad.output).toMatch(/plugin-uses-published-entries: plugins\/acme\/index\.ts → core\/layout\.ts/);
    expect(bad.output).toMatch(
      /plugin-not-into-another-plugin: plugins\/acme\/index\.ts → plugins\/decider-http\/client\.ts/,
    );
    expect(bad.output).not.toMatch(/→ core\/plugin\.ts/);

    const good = cruise({
      'plugins/acme/index.ts':
        "import { x } from '../../core/plugin.js';\nimport { w } from './own.js';\nexport const all = [x, w];\n",
      'plugins/acme/own.ts': 'export const w = 4;\n',
    });
    expect(good.output).toContain('no dependency violations found');
    expect(good.code).toBe(0);
  });
});
