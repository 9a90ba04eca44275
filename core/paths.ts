import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root: two levels above this file both in the sources (core/paths.ts)
 * and in the build (dist/core/paths.js is three levels, handled below).
 */
function packageRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  // dist/core/ -> package root is ../../ ; core/ -> ../
  return here.replace(/\/dist\/core\/?$/, '/').replace(/\/core\/?$/, '/');
}

export const PACKAGE_ROOT = packageRoot();
export const SHARE_DIR = join(PACKAGE_ROOT, 'share');
