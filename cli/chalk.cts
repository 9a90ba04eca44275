#!/usr/bin/env node
// The `chalk` binary. It is CommonJS so that `chalk version` costs what `node -e 0` costs:
// an ES module entry pays for node's ES module loader (about 10 ms here) before its first
// line, and each static import more (bench/cli-startup.mjs). Every other command loads the
// CLI proper (main.js, an ES module) and runs there with the same arguments.
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The words that ask for the version; main.js answers them too when it is run itself. */
const VERSION_WORDS = new Set(['version', '--version', '-v']);

if (VERSION_WORDS.has(process.argv[2] ?? '')) {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  try {
    // writeSync, not process.stdout: making the stream object is most of what is left to save.
    writeSync(1, `${pkg.version}\n`);
  } catch (err) {
    // A reader that went away (`chalk version | true`) ends it quietly, as main.js does.
    if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
  }
} else {
  import('./main.js').catch((err: unknown) => {
    process.stderr.write(`chalk: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
