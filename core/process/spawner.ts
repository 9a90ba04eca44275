import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../paths.js';
import { type RunOptions, type RunResult, runEnd } from './run-types.js';

/**
 * The process helper: a small node process that starts the programs `run` asks for while a
 * ticket runs (host git, a dozen times a loop). node forks to start a program and its thread
 * waits for the fork, whose cost grows with the forking process's memory: about 10 ms from the
 * harness (over 100 MB), half that from the helper, which does it on the other core while the
 * harness goes on. Held by `holdSpawner` (a run holds it while it lasts); `run` uses it while
 * anyone holds it and it is alive, and starts programs itself otherwise. Nothing secret is in
 * its argv: the environment of each program goes over the IPC channel, as spawn would pass it.
 */

interface Answer {
  id: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  error: { code: string; message: string } | null;
  stdout: Uint8Array;
  stderr: Uint8Array;
}

/** The compiled helper; from the sources (tests), the build's copy; null when there is none. */
function childEntry(): string | null {
  const here = fileURLToPath(import.meta.url);
  const entry = here.endsWith('.js')
    ? join(here, '..', 'spawner-child.js')
    : join(PACKAGE_ROOT, 'dist', 'core', 'process', 'spawner-child.js');
  return existsSync(entry) ? entry : null;
}

const text = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');

class Spawner {
  private next = 1;
  private readonly pending = new Map<number, (r: RunResult) => void>();
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (a: Answer) => this.answer(a));
    child.on('exit', () => this.end(`chalk's process helper ended`));
    child.on('error', (err) => this.end(`chalk's process helper failed: ${err.message}`));
    this.idle();
  }

  static start(): Spawner | null {
    const entry = childEntry();
    if (!entry) return null;
    const child = fork(entry, [], {
      // A small heap: it holds one answer at a time.
      execArgv: ['--max-old-space-size=64'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: {},
    });
    return new Spawner(child);
  }

  alive = true;

  run(cmd: string, args: string[], opts: RunOptions): Promise<RunResult> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      // While an answer is awaited, the channel keeps the process alive.
      if (this.pending.size === 1) this.busy();
      this.child.send({
        id,
        cmd,
        args,
        // The helper's own directory is where the harness was when it started it.
        cwd: opts.cwd ?? process.cwd(),
        input: opts.input ?? '',
        env: opts.env ?? process.env,
        timeoutMs: opts.timeoutMs,
      });
    });
  }

  stop(): void {
    this.alive = false;
    if (this.child.connected) this.child.disconnect();
  }

  private answer(a: Answer): void {
    const resolve = this.pending.get(a.id);
    if (!resolve) return;
    this.pending.delete(a.id);
    if (this.pending.size === 0) this.idle();
    resolve(runEnd({ ...a, stdout: text(a.stdout), stderr: text(a.stderr) }));
  }

  /** The helper is gone: whatever it was asked for is answered as failed (it may or may not have run). */
  private end(why: string): void {
    this.alive = false;
    for (const resolve of this.pending.values()) resolve({ code: 1, stdout: '', stderr: why });
    this.pending.clear();
    this.idle();
  }

  private busy(): void {
    this.child.ref();
    this.child.channel?.ref();
  }

  private idle(): void {
    this.child.unref();
    this.child.channel?.unref();
  }
}

let spawner: Spawner | null = null;
let holders = 0;

/** The helper when someone holds it and it is alive; null otherwise (run starts programs itself). */
export function liveSpawner(): { run: Spawner['run'] } | null {
  return spawner?.alive ? spawner : null;
}

/**
 * Holds the process helper (starting it on the first hold) until the returned release is
 * called; the last release stops it. Without a built helper (sources without a build) nothing
 * is started and `run` starts programs itself.
 */
export function holdSpawner(): () => void {
  holders++;
  if (!spawner?.alive) spawner = Spawner.start();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders--;
    if (holders === 0) {
      spawner?.stop();
      spawner = null;
    }
  };
}
