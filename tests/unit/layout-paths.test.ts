import { join, normalize, sep } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runPaths, runsDir } from '../../core/layout.js';

describe("a run's paths", () => {
  test('each is a normalized path inside its run directory, as join would make it', () => {
    for (const state of ['/tmp/state', '/tmp/state/', '/tmp//state/./x/..']) {
      const env = { XDG_STATE_HOME: state };
      const paths = runPaths('shop-1a2b3c4d', 'SHOP-7', env);
      expect(paths.dir).toBe(join(runsDir('shop-1a2b3c4d', env), 'SHOP-7'));
      expect(paths.io).toBe(join(paths.dir, 'io'));
      expect(paths.record).toBe(join(paths.dir, 'run.json'));
      expect(paths.bundle).toBe(join(paths.dir, 'io', 'out.bundle'));
      for (const [name, path] of Object.entries(paths)) {
        expect(normalize(path), name).toBe(path);
        if (name !== 'dir') expect(path.startsWith(`${paths.dir}${sep}`), name).toBe(true);
      }
    }
  });
});
