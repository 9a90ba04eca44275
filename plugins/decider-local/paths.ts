import { join } from 'node:path';
import { deciderStateDir } from '../../core/host.js';

/**
 * The local decider's state, under the decider state directory core keeps
 * (`${XDG_STATE_HOME:-~/.local/state}/chalk/decider/`, beside the trusted URLs):
 *
 * ```
 * installed.json             what `chalk decider up` installed: models, revisions, median
 * *.pid, *.log, last-used    the local decider, embedding service and idle watcher
 * up.lock, ask.lock          one copy starts; one question at a time
 * hf/                        the models it downloaded (a Hugging Face cache)
 * embed-runtime/             the embedding service's runtime (transformers.js)
 * ```
 */
/**
 * The local decider's files (this plugin and its embedding service, ./embed): what `chalk
 * decider up` installed and measured, the two services' and the idle watcher's pid files
 * and logs, the time of the last question, the machine-wide locks (`up`: one copy starts;
 * `ask`: one question at a time) and the downloaded models.
 */
export interface LocalDeciderPaths {
  dir: string;
  installed: string;
  lastUsed: string;
  deciderPid: string;
  embedPid: string;
  watchPid: string;
  deciderLog: string;
  embedLog: string;
  watchLog: string;
  upLock: string;
  askLock: string;
  /** HF_HOME for the downloads and for the services (offline). */
  hfHome: string;
  /** Where `chalk decider up` installs the embedding service's runtime (transformers.js). */
  embedRuntime: string;
}

export function localDeciderPaths(env: NodeJS.ProcessEnv = process.env): LocalDeciderPaths {
  return localDeciderPathsIn(deciderStateDir(env));
}

/** The same paths under a given decider state directory (a detached service is handed it). */
export function localDeciderPathsIn(dir: string): LocalDeciderPaths {
  return {
    dir,
    installed: join(dir, 'installed.json'),
    lastUsed: join(dir, 'last-used'),
    deciderPid: join(dir, 'decider.pid'),
    embedPid: join(dir, 'embed.pid'),
    watchPid: join(dir, 'watch.pid'),
    deciderLog: join(dir, 'decider.log'),
    embedLog: join(dir, 'embed.log'),
    watchLog: join(dir, 'watch.log'),
    upLock: join(dir, 'up.lock'),
    askLock: join(dir, 'ask.lock'),
    hfHome: join(dir, 'hf'),
    embedRuntime: join(dir, 'embed-runtime'),
  };
}
