/**
 * Work that must finish before a signal handler exits the process, whoever
 * installed the handler: the run's edge holds the interrupted call's record
 * here, and the sandbox plugin's SIGINT/SIGTERM handler waits for it after
 * removing its containers (otherwise the process could exit before the
 * `interrupted` row is written). Each handler keeps its own deadline.
 */
const held = new Set<Promise<unknown>>();

/** Holds the process's signal exit until `work` settles. */
export function holdExit(work: Promise<unknown>): void {
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  held.add(settled);
  void settled.then(() => held.delete(settled));
}

/** Settles once everything held now (and anything held while waiting) has settled. */
export async function exitBarrier(): Promise<void> {
  while (held.size > 0) await Promise.allSettled([...held]);
}
