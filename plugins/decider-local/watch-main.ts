/**
 * The idle watcher: `node watch-main.js --dir <state>/decider --idle-ms N --every-ms M`,
 * started detached beside the local services. Every M ms it looks at `last-used` (touched by
 * every question and embedding request); once that is N ms old it stops both services and
 * exits. It also exits when both services are gone, or when another watcher took over.
 */
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { readPid } from '../../core/host.js';
import { localDeciderPathsIn } from './paths.js';
import { servicesRunning, stopServices } from './services.js';

const { values } = parseArgs({
  options: { dir: { type: 'string' }, 'idle-ms': { type: 'string' }, 'every-ms': { type: 'string' } },
});
const idleMs = Number(values['idle-ms']);
const everyMs = Number(values['every-ms']);
if (!values.dir || !(idleMs > 0) || !(everyMs > 0)) {
  process.stderr.write('usage: watch-main.js --dir DIR --idle-ms N --every-ms M\n');
  process.exit(2);
}
const paths = localDeciderPathsIn(values.dir);

function idleFor(): number {
  try {
    return Date.now() - statSync(paths.lastUsed).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

for (;;) {
  await sleep(Math.min(everyMs, Math.max(10, idleMs - idleFor())));
  if (readPid(paths.watchPid) !== process.pid) process.exit(0); // another watcher took over
  if (!servicesRunning(paths)) {
    await stopServices(paths);
    process.stderr.write(`${new Date().toISOString()} a service is gone: stopped the rest\n`);
    process.exit(0);
  }
  if (idleFor() >= idleMs) {
    await stopServices(paths);
    process.stderr.write(
      `${new Date().toISOString()} idle for ${Math.round(idleMs / 60_000)} min: stopped the local decider and embedding service\n`,
    );
    process.exit(0);
  }
}
