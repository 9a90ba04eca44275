#!/usr/bin/env node
// The `chalk` binary. It is CommonJS so that `chalk version` costs what `node -e 0` costs:
// an ES module entry pays for node's ES module loader (about 10 ms here) before its first
// line, and each static import more (bench/cli-startup.mjs). `chalk status` and `chalk
// status --json`, exactly so written, run from one bundled CommonJS file, dist/cli/light.cjs
// (cli/light.ts; the build makes it), compiled with a V8 code cache: resolving and compiling
// its 160 modules one by one was most of its time. Every other command line (`chalk status
// --help` too) loads the CLI proper (main.js, an ES module) and runs there with the same
// arguments, as `chalk status` does when the bundle is not built.
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The words that ask for the version; main.js answers them too when it is run itself. */
const VERSION_WORDS = new Set(['version', '--version', '-v']);

function fail(err: unknown): void {
  process.stderr.write(`chalk: ${(err as Error)?.message ?? String(err)}\n`);
  process.exitCode = 1;
}

function runMain(): void {
  import('./main.js').catch(fail);
}

/** Runs the bundle of the light commands; false when it is not built. */
function runLight(): boolean {
  const { requireWithCodeCache } = require('./code-cache.cjs') as typeof import('./code-cache.cjs');
  const { stateDir } = require('../core/state-dir.cjs') as typeof import('../core/state-dir.cjs');
  let run: ReturnType<typeof requireWithCodeCache>;
  try {
    run = requireWithCodeCache(join(__dirname, 'light.cjs'), join(stateDir(), 'code-cache'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (err as NodeJS.ErrnoException).path?.endsWith('light.cjs'))
      return false;
    throw err;
  }
  // Written once the command is done, so what it compiled on the way is in the cache.
  if (run.use !== 'used' && run.use !== 'off') process.once('exit', () => run.save());
  return true;
}

const first = process.argv[2];
if (VERSION_WORDS.has(first ?? '')) {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  try {
    // writeSync, not process.stdout: making the stream object is most of what is left to save.
    writeSync(1, `${pkg.version}\n`);
  } catch (err) {
    // A reader that went away (`chalk version | true`) ends it quietly, as main.js does.
    if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
  }
} else if ((require('./light-words.cjs') as typeof import('./light-words.cjs')).lightForm(process.argv.slice(2))) {
  try {
    if (!runLight()) runMain();
  } catch (err) {
    fail(err);
  }
} else {
  runMain();
}
