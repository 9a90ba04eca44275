// First: zod parses without generating code from here on (cli/zod-jitless.ts).
import './zod-jitless.js';
import { endQuietlyOnClosedPipe, exitWith, runOnChannels } from './launch.js';
import { type LightForm, type LightWord, lightForm } from './light-words.cjs';
import { runStatus } from './status-run.js';

/*
 * The entry of the command lines cli/light-words.cts accepts (`chalk status`, `chalk status
 * --json`). The build bundles it with everything it imports into one CommonJS file,
 * dist/cli/light.cjs (scripts/bundle-light.mjs), which the binary runs with a V8 code cache
 * (cli/code-cache.cts): no module is resolved or compiled at start-up. The forms are exact, so
 * no argument parser is in it; each command runs as cli/main.js would run it (cli/launch.ts: the
 * same channels, the same one line on an error), and nothing in it can import a plugin or any
 * module outside the bundle (the build refuses one that could), so a process running it never
 * holds a second copy of Chalk's published entries.
 */

const RUN: Record<LightWord, (form: LightForm) => Promise<number>> = {
  status: (form) => runOnChannels((out) => runStatus({ json: form.json }, out)),
};

async function light(argv: string[]): Promise<number> {
  const form = lightForm(argv);
  if (!form) throw new Error(`the light entry serves chalk status [--json] as written, not '${argv.join(' ')}'`);
  return RUN[form.word](form);
}

endQuietlyOnClosedPipe();
exitWith(light(process.argv.slice(2)));
