import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { acquireLock, stateDir } from '../../core/host.js';

/**
 * Takes this machine's lock on making one thing on the engine (`kind`: `build` for an image layer,
 * `mirror` for a sandbox mirror, `network` for the egress network; `what`: its tag or name), so
 * the chalks of the machine make it one at a time. The locks live in `<state>/sandbox` (0700),
 * one file per thing; resolves to the release once held, rejects (LockTimeout) after `waitMs`.
 */
export function sandboxLock(kind: string, what: string, env: NodeJS.ProcessEnv, waitMs: number): Promise<() => void> {
  const locks = join(stateDir(env), 'sandbox');
  mkdirSync(locks, { recursive: true, mode: 0o700 });
  return acquireLock(join(locks, `${kind}-${what.replace(/[^a-z0-9.-]/gi, '_')}.lock`), waitMs);
}
