import { exitBarrier } from '../../core/host.js';

/**
 * Sessions open in this process, so that SIGINT and SIGTERM remove their
 * containers before the process exits (130 and 143, like a shell).
 */
interface Closable {
  stop(): Promise<void>;
}

const open = new Set<Closable>();
let installed = false;

export function track(s: Closable): void {
  open.add(s);
}

export function untrack(s: Closable): void {
  open.delete(s);
}

export function openSessionCount(): number {
  return open.size;
}

/** Stops every tracked session; failures are ignored (the container may be gone already). */
export async function closeAllSessions(): Promise<void> {
  await Promise.allSettled([...open].map((s) => s.stop()));
}

/** Bounded wait for the removal before exiting anyway. */
const EXIT_DEADLINE_MS = 15_000;

/**
 * Installs SIGINT/SIGTERM handlers once per process: remove every open
 * sandbox, wait for what others hold the exit for (the interrupted call's record:
 * core/process/exit-barrier.ts), then exit 130 (SIGINT) or 143 (SIGTERM). A second
 * signal exits at once.
 */
export function installSignalHandlers(exit: (code: number) => void = (c) => process.exit(c)): void {
  if (installed) return;
  installed = true;
  let closing = false;
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(sig, () => {
      if (closing) return exit(code);
      closing = true;
      setTimeout(() => exit(code), EXIT_DEADLINE_MS).unref();
      void closeAllSessions()
        .then(() => exitBarrier())
        .finally(() => exit(code));
    });
  }
}
