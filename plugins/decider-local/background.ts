import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { freemem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { isLocalUrl } from '../../core/decider.js';
import type { Config, Log } from '../../core/plugin.js';
import { storeTarget } from '../../core/store-entry.js';
import { readInstalled } from './installed.js';
import { localDeciderPaths } from './paths.js';
import { portOf, servicesRunning } from './services.js';
import { type StartMoment, startRule } from './start-rule.js';
import { startTimeoutMs } from './up.js';

/** Why a run does not start the local services, or null when it does. */
export function whyNotStart(config: Config, env: NodeJS.ProcessEnv = process.env): string | null {
  if (config.str('CHALK_DECIDER') === 'off') return 'the decider is off';
  if (!isLocalUrl(config.str('CHALK_DECIDER_URL')) || !isLocalUrl(config.str('CHALK_EMBED_URL')))
    return 'the decider is not on this machine';
  const paths = localDeciderPaths(env);
  if (!readInstalled(paths.installed)) return 'the local decider is not installed (chalk decider up)';
  if (servicesRunning(paths)) return 'it is already running';
  return null;
}

/**
 * Starts the local decider and embedding service in the background when they are installed
 * and needed (the decider not off, both URLs on this machine, not already running): a detached
 * process (start-main.js) does it, offline, and the caller never waits on it. Returns whether
 * a start was launched; a question before they are healthy simply gets no answer.
 */
export function startInBackground(config: Config, env: NodeJS.ProcessEnv = process.env): boolean {
  if (whyNotStart(config, env) !== null) return false;
  const paths = localDeciderPaths(env);
  const target = storeTarget(config, env);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const out = openSync(paths.deciderLog, 'a', 0o600);
  try {
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('./start-main.js', import.meta.url)),
        '--dir',
        paths.dir,
        '--decider-port',
        String(portOf(config.str('CHALK_DECIDER_URL'))),
        '--embed-port',
        String(portOf(config.str('CHALK_EMBED_URL'))),
        '--idle-ms',
        String(config.num('CHALK_DECIDER_IDLE_MINUTES') * 60_000),
        '--timeout-ms',
        String(startTimeoutMs(config)),
        // The store the back-fill after health writes to: the embedded server's directory here,
        // a server's URL (it may hold a password) only in the child's environment.
        ...(target.kind === 'embedded' ? ['--db-dir', target.paths.dir] : []),
      ],
      {
        detached: true,
        stdio: ['ignore', out, out],
        env: {
          PATH: env.PATH ?? '',
          HOME: env.HOME ?? '',
          ...(target.kind === 'server' ? { CHALK_DATABASE_URL: target.url } : {}),
        },
      },
    );
    child.on('error', () => {});
    child.unref();
  } finally {
    closeSync(out);
  }
  return true;
}

export interface RunStartsOptions {
  config: Config;
  log: Pick<Log, 'info' | 'warn'>;
  /** Counts the resolved, not forgotten lessons a repository's loops can be given (its own and general ones). */
  resolvedLessons: (repo: string) => Promise<number>;
  env?: NodeJS.ProcessEnv;
  /** The machine's free memory in MiB (default os.freemem). */
  freeMiB?: () => number;
  /** What launches the start (default startInBackground). */
  start?: (config: Config, env: NodeJS.ProcessEnv) => boolean;
}

/**
 * One process's background starts of the local services, by `startRule`: at the run's start when
 * rerank is possible, else when a loop fails its rubric, and when a question finds nothing
 * listening; never with too little free memory unless CHALK_DECIDER=on. Launches at most once,
 * and says each reason once.
 */
export class RunStarts {
  private launched = false;
  private readonly said = new Set<string>();

  constructor(private readonly o: RunStartsOptions) {}

  /** A run is starting its sandbox. */
  async atRunStart(repo: string): Promise<boolean> {
    if (this.launched || this.blocked()) return false;
    let resolvedLessons: number | null = null;
    try {
      resolvedLessons = await this.o.resolvedLessons(repo);
    } catch {
      resolvedLessons = null;
    }
    return this.at('run-start', resolvedLessons);
  }

  /** A loop failed its rubric: the stuck question may come next. */
  afterFailedLoop(): boolean {
    if (this.launched || this.blocked()) return false;
    return this.at('failed-rubric', null);
  }

  /** A question found nothing listening. */
  noAnswer(): boolean {
    if (this.launched || this.blocked()) return false;
    return this.at('no-answer', null);
  }

  private blocked(): boolean {
    return whyNotStart(this.o.config, this.o.env ?? process.env) !== null;
  }

  private at(moment: StartMoment, resolvedLessons: number | null): boolean {
    const rule = startRule({
      mode: this.o.config.str('CHALK_DECIDER'),
      moment,
      freeMiB: (this.o.freeMiB ?? (() => freemem() / 2 ** 20))(),
      resolvedLessons,
      minLessons: this.o.config.num('CHALK_DECIDER_MIN_LESSONS'),
    });
    if (!rule.start) {
      if (!this.said.has(rule.why)) {
        this.said.add(rule.why);
        (rule.why === 'memory' ? this.o.log.warn : this.o.log.info).call(this.o.log, rule.message);
      }
      return false;
    }
    this.launched = (this.o.start ?? startInBackground)(this.o.config, this.o.env ?? process.env);
    return this.launched;
  }
}
