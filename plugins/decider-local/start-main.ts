/**
 * A run's background start of the local services: `node start-main.js --dir DIR --decider-port N
 * --embed-port N --idle-ms N --timeout-ms N`, detached, so the run never waits on it. Starts what
 * `chalk decider up` installed, offline (nothing is downloaded), under the `up` lock taken without
 * waiting: when another chalk holds it, that one is starting them, and this one exits.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CONTEXT_TOKENS, DEFAULT_LIMIT } from '../../core/decider.js';
import { tryLock } from '../../core/host.js';
import { backfillLocal, targetFromChild } from './backfill.js';
import { touch } from './client.js';
import { readInstalled } from './installed.js';
import { localDeciderPathsIn } from './paths.js';
import { servicesRunning, startServices, stopServices, waitHealthy } from './services.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    'decider-port': { type: 'string' },
    'embed-port': { type: 'string' },
    'idle-ms': { type: 'string' },
    'timeout-ms': { type: 'string' },
    'db-dir': { type: 'string' },
  },
});
const paths = localDeciderPathsIn(values.dir ?? '');
const ports = { decider: Number(values['decider-port']), embed: Number(values['embed-port']) };
const say = (l: string) => process.stderr.write(`${new Date().toISOString()} ${l}\n`);

const installed = readInstalled(paths.installed);
if (!values.dir || !installed) {
  say('nothing is installed: run chalk decider up');
  process.exit(1);
}
async function start(release: () => void): Promise<number> {
  try {
    if (servicesRunning(paths)) {
      touch(paths.lastUsed);
      return 0;
    }
    await stopServices(paths);
    startServices({
      paths,
      installed: installed as NonNullable<typeof installed>,
      ports,
      idleMs: Number(values['idle-ms']),
    });
    const entry = {
      id: 'decider',
      url: `http://127.0.0.1:${ports.decider}`,
      maxContextTokens: DEFAULT_CONTEXT_TOKENS,
      limit: DEFAULT_LIMIT,
    };
    const up = await waitHealthy({ paths, ports, entry, timeoutMs: Number(values['timeout-ms']) });
    say(`the local decider is up after ${(up.ms / 1000).toFixed(1)}s`);
    const target = targetFromChild({ dbDir: values['db-dir'], env: process.env });
    if (target) say(await backfillLocal({ target, timeoutMs: Number(values['timeout-ms']), embedPort: ports.embed }));
    return 0;
  } catch (err) {
    say((err as Error).message);
    return 1;
  } finally {
    release();
  }
}

const release = tryLock(paths.upLock);
// No lock: another chalk is starting them.
process.exitCode = release ? await start(release) : 0;
