import { holdExit } from '../core/process/exit-barrier.js';

/**
 * The run's edge with the process: what core/run never touches itself.
 * SIGINT and SIGTERM abort the run's signal (the call in flight is then
 * recorded `interrupted`); when nothing else handles the signal (the sandbox
 * plugin's handlers remove its containers and exit), this exits with 130 or
 * 143 once that record is written. The claim's pid file is released at exit.
 */
export interface RunEdge {
  signal: AbortSignal;
  /** For RunTicketOptions.onInterrupt. */
  onInterrupt: (recorded: Promise<void>) => void;
  /** For RunTicketOptions.atExit. */
  atExit: (release: () => void) => () => void;
  /** The exit code of the signal that aborted the run, or null. */
  interruptedCode(): number | null;
  /** Settles once the interrupted call's record is written (at once when there was none). */
  recorded(): Promise<void>;
  /** Removes the handlers. */
  close(): void;
}

export function runEdge(): RunEdge {
  const controller = new AbortController();
  let recorded: Promise<void> = Promise.resolve();
  let code: number | null = null;
  const handlers = (
    [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const
  ).map(([sig, exit]) => {
    const handler = () => {
      const alone = process.listenerCount(sig) <= 1;
      code ??= exit;
      controller.abort(new Error(`interrupted by ${sig}`));
      if (alone) void recorded.finally(() => process.exit(exit));
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  return {
    signal: controller.signal,
    onInterrupt: (p) => {
      recorded = p;
      holdExit(p);
    },
    atExit: (release) => {
      process.once('exit', release);
      return () => process.off('exit', release);
    },
    interruptedCode: () => code,
    recorded: () => recorded,
    close: () => {
      for (const [sig, h] of handlers) process.off(sig, h);
    },
  };
}

/**
 * A command's run under the edge: `body` gets the edge to hand to core; a run stopped by a
 * signal returns the signal's exit code once the interrupted call's row is written (the sandbox
 * plugin's handlers, or the edge, then exit); the store is closed on every way out, after that row.
 */
export async function underRunEdge(
  store: { close(): Promise<void> },
  body: (edge: RunEdge) => Promise<number>,
): Promise<number> {
  const edge = runEdge();
  try {
    return await body(edge);
  } catch (err) {
    const code = edge.interruptedCode();
    if (code !== null) {
      await edge.recorded();
      return code;
    }
    throw err;
  } finally {
    edge.close();
    await store.close().catch(() => undefined);
  }
}
