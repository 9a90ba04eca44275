import { setupCacheDir } from '../../layout.js';
import type { Log } from '../../ports/log.js';
import type { SandboxSession } from '../../ports/sandbox.js';
import { cacheDirs, type Keyed, setupKeyFor } from '../../setup-cache/compute.js';
import { maySaveFrom } from '../../setup-cache/key.js';
import { overflowKeys } from '../../setup-cache/stale.js';
import {
  type FoundEntry,
  findEntry,
  keepEntry,
  listEntries,
  newArchivePath,
  removeEntry,
  touchEntry,
} from '../../setup-cache/store.js';
import type { RunContext } from '../base/context.js';
import type { RunDeps } from '../base/deps.js';
import type { OpenedSandbox } from '../base/session.js';
import { runSetup } from '../base/session.js';

const MIB = 1024 * 1024;
/** Saved states a repository keeps: the newest save and the one before (a ticket of the older base still finds its own). */
const KEEP_PER_REPO = 2;
const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0];
const mib = (bytes: number) => `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

export interface SetupOptions {
  /** On a miss, run the setup command (the run's sandbox); a review or distill sandbox only restores. */
  runSetup: boolean;
  signal?: AbortSignal;
}

/**
 * The setup of a fresh sandbox, paid once per repository, image, setup command and
 * lockfiles: the state a saved setup left is restored (core/setup-cache) instead of
 * running the command; otherwise the command runs, and when the clone is a base branch's
 * tree but for specs, what it left is saved before any agent call for the later
 * sandboxes. Best effort around the command: a state that cannot be keyed, restored or
 * saved costs one line and the setup command, never the run.
 */
export async function setupSandbox(
  ctx: RunContext,
  deps: RunDeps,
  log: Log,
  opened: OpenedSandbox,
  o: SetupOptions,
): Promise<void> {
  if (deps.config.str('CHALK_SETUP_CMD').trim() === '') return;
  const { session } = opened;
  const dir = setupCacheDir(ctx.repo, deps.env);
  const keyed = session.saveState && session.restoreState ? await keyFor(ctx, deps, log, opened.base) : null;
  const found = keyed ? findEntry(dir, keyed.key) : null;
  const restore = found ? await restored(session, deps, log, { dir, found, o }) : 'none';
  if (restore === 'restored' || !o.runSetup) return;
  await runSetup(ctx, session, deps, log);
  // After a failed restore the setup ran over what was half unpacked: nothing to keep from that.
  if (!keyed || restore === 'failed') return;
  const changed = opened.forkPoint
    ? await deps.git.changedPaths(ctx.root, { from: opened.forkPoint, to: opened.base }).catch(() => null)
    : null;
  if (!maySaveFrom(changed, 'specs/')) {
    log.debug('setup state not saved: the branch holds more than its spec, and only a base tree is saved');
    return;
  }
  await save(session, deps, log, { dir, keyed, o });
}

async function keyFor(ctx: RunContext, deps: RunDeps, log: Log, head: string): Promise<Keyed | null> {
  try {
    return await setupKeyFor(deps, { root: ctx.root, rev: head });
  } catch (err) {
    log.warn(`setup cache skipped: ${describe(err)}`);
    return null;
  }
}

async function restored(
  session: SandboxSession,
  deps: RunDeps,
  log: Log,
  a: { dir: string; found: FoundEntry; o: SetupOptions },
): Promise<'restored' | 'failed'> {
  const started = deps.clock.now().getTime();
  try {
    await session.restoreState?.(a.found.archive, a.o.signal ? { signal: a.o.signal } : {});
  } catch (err) {
    if (a.o.signal?.aborted) throw err;
    removeEntry(a.dir, a.found.key);
    log.warn(
      `could not restore the saved setup state (${describe(err)}); it is removed${a.o.runSetup ? ', and the setup command runs' : ''}`,
    );
    return 'failed';
  }
  touchEntry(a.dir, a.found, deps.clock.now());
  const took = deps.clock.now().getTime() - started;
  const line = `setup restored from the state saved ${a.found.createdAt.slice(0, 16).replace('T', ' ')} UTC (${mib(a.found.bytes)}, ${secs(took)}); the setup command was not run`;
  if (a.o.runSetup) log.info(line);
  else log.debug(line);
  return 'restored';
}

async function save(
  session: SandboxSession,
  deps: RunDeps,
  log: Log,
  a: { dir: string; keyed: Keyed; o: SetupOptions },
): Promise<void> {
  const maxBytes = deps.config.num('CHALK_SETUP_CACHE_MB') * MIB;
  const started = deps.clock.now().getTime();
  const tmp = newArchivePath(a.dir);
  try {
    const r = await session.saveState?.(tmp, {
      dirs: cacheDirs(deps.config),
      maxBytes,
      ...(a.o.signal ? { signal: a.o.signal } : {}),
    });
    if (!r?.saved) {
      log.warn(`setup state not saved: ${r?.why ?? 'the sandbox cannot save it'}`);
      return;
    }
    const now = deps.clock.now().toISOString();
    keepEntry(a.dir, tmp, { ...a.keyed, bytes: r.bytes, createdAt: now, usedAt: now });
    for (const key of overflowKeys(listEntries(a.dir), KEEP_PER_REPO)) removeEntry(a.dir, key);
    log.info(
      `setup state saved for this repository's next sandboxes (${mib(r.bytes)} in ${secs(deps.clock.now().getTime() - started)})`,
    );
  } catch (err) {
    if (a.o.signal?.aborted) throw err;
    log.warn(`setup state not saved: ${describe(err)}`);
  }
}
