import { entryFromConfig, isLocalUrl } from '../../core/decider.js';
import {
  type CheckResult,
  type Config,
  DECIDER_STATUS,
  type DoctorCheck,
  type Plugin,
  type PluginHost,
  Tokens,
} from '../../core/plugin.js';
import { RunStarts, startInBackground } from './background.js';
import { LocalDecider } from './client.js';
import { DECIDER_LOCAL_COMMANDS } from './commands.js';
import { readInstalled } from './installed.js';
import { localDeciderPaths } from './paths.js';
import { startingReason } from './services.js';
import { installCheckResult, localStatusPart, readInstallStatus } from './status.js';
import { startTimeoutMs } from './up.js';

/** The name this plugin offers its decider under (CHALK_DECIDER_PROVIDER=local). */
export const LOCAL_DECIDER = 'local';

/**
 * The local decider at CHALK_DECIDER_URL; a question that finds nothing listening calls
 * `onUnreachable` (the plugin's RunStarts: start it in the background, by the start rule).
 */
export function localDeciderFromConfig(
  config: Config,
  o: { env?: NodeJS.ProcessEnv; onUnreachable?: () => void } = {},
): LocalDecider {
  const env = o.env ?? process.env;
  const paths = localDeciderPaths(env);
  const installed = readInstalled(paths.installed);
  const revision = installed?.decider.revision;
  const wake = o.onUnreachable ?? (() => startInBackground(config, env));
  let woken = false;
  return new LocalDecider({
    ...(revision ? { revision } : {}),
    ...(installed ? { medianMs: installed.benchMs } : {}),
    entry: entryFromConfig(config),
    url: config.str('CHALK_DECIDER_URL'),
    askLock: paths.askLock,
    lastUsed: paths.lastUsed,
    starting: () => startingReason(paths, startTimeoutMs(config)),
    onUnreachable: () => {
      if (woken) return;
      woken = true;
      wake();
    },
  });
}

/** `chalk doctor`'s line: what `chalk decider up` installed and measured, and whether it runs. */
export function localDeciderCheck(config: Config, env: NodeJS.ProcessEnv = process.env): DoctorCheck {
  return {
    id: 'decider-local',
    async run(): Promise<CheckResult> {
      const label = 'local decider';
      if (!isLocalUrl(config.str('CHALK_DECIDER_URL')))
        return { status: '--', label, detail: 'not used (CHALK_DECIDER_URL is on another machine)' };
      const r = readInstallStatus(config, env);
      if (!r) return { status: '--', label, detail: 'not installed (chalk decider up installs it)' };
      return installCheckResult(r.status);
    },
  };
}

/** Whether the Decider a run gets is this plugin's `local` (core's selection chose it, and no plugin bound another). */
export function localIsBound(kernel: PluginHost): boolean {
  return kernel.boundByPlugin(Tokens.Decider) === 'selection' && kernel.selected.get('Decider') === LOCAL_DECIDER;
}

/**
 * The local decider: strands-decider on this machine's loopback, speaking decider protocol v1
 * through the hosted decider's client, one question at a time across the machine. Offered as
 * `local` once `chalk decider up` installed it (a loopback URL with nothing installed is any
 * server there, reached as `hosted`); it declares that it fits a loopback CHALK_DECIDER_URL, so core's rule picks it there. A
 * run starts the services in the background by `startRule` (start-rule.ts): at its start (`runStart`)
 * when rerank is possible, else when a loop fails its rubric or a question finds nothing listening,
 * and never with under 6,144 MiB free unless CHALK_DECIDER=on.
 */
const plugin: Plugin = {
  name: 'decider-local',
  commands: DECIDER_LOCAL_COMMANDS,
  register(kernel) {
    kernel.checks.push(localDeciderCheck(kernel.config));
    kernel.contribute(DECIDER_STATUS, localStatusPart(kernel.config));
    if (readInstalled(localDeciderPaths().installed) === null) return;
    const starts = new RunStarts({
      config: kernel.config,
      log: kernel.log,
      resolvedLessons: async (repo) => (await kernel.resolve(Tokens.Store).lessons.list({ repo })).length,
    });
    kernel.offer(
      'Decider',
      LOCAL_DECIDER,
      { useFactory: () => localDeciderFromConfig(kernel.config, { onUnreachable: () => starts.noAnswer() }) },
      // Under CHALK_DECIDER_PROVIDER=auto this offer fits a CHALK_DECIDER_URL on this machine.
      { auto: (config) => isLocalUrl(config.str('CHALK_DECIDER_URL')) },
    );
    kernel.hooks.runStart.tapPromise('decider-local', async (ev) => {
      if (localIsBound(kernel)) await starts.atRunStart(ev.repo);
    });
    kernel.hooks.afterRubric.tapPromise('decider-local', async (ev) => {
      if (!ev.passed && localIsBound(kernel)) starts.afterFailedLoop();
    });
  },
};
export default plugin;
