// First: zod parses without generating code from here on (cli/zod-jitless.ts).
import './zod-jitless.js';
import { Cli, type CommandClass } from 'clipanion';
import { endQuietlyOnClosedPipe, exitWith, runCommandClass } from './launch.js';
import { isLightWord, LIGHT_COMMANDS, type LightWord } from './light-words.cjs';
import StatusCommand from './status.js';

/*
 * The entry of the commands cli/light-words.cts names (`chalk status`). The build bundles it
 * with everything it imports into one CommonJS file, dist/cli/light.cjs (scripts/bundle-light.mjs),
 * which the binary runs with a V8 code cache (cli/code-cache.cts): no module is resolved or
 * compiled at start-up. It runs each command as cli/main.js would (cli/launch.ts), and nothing
 * in it can import a plugin or any module outside the bundle (the build refuses one that could),
 * so a process running it never holds a second copy of Chalk's published entries.
 */

const CLASSES: Record<LightWord, CommandClass> = { status: StatusCommand };

async function light(argv: string[]): Promise<number> {
  const [word] = argv;
  if (!isLightWord(word))
    throw new Error(`the light entry serves ${Object.keys(LIGHT_COMMANDS).join(', ')}, not '${word}'`);
  return runCommandClass(Cli, CLASSES[word], argv, LIGHT_COMMANDS[word], null);
}

endQuietlyOnClosedPipe();
exitWith(light(process.argv.slice(2)));
